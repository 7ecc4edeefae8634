import Foundation
import XCTest

/// A test case with an nginx-rtmp of its own, started before each test and stopped after it,
/// and a temporary directory for generated media, removed after each test. Skips when nginx
/// or its RTMP module is not installed.
class NginxTestCase: XCTestCase {
    var server: NginxRTMPServer!
    var dir: URL!

    override func setUpWithError() throws {
        try XCTSkipUnless(NginxRTMPServer.isAvailable, "nginx + libnginx-mod-rtmp not installed")
        server = try NginxRTMPServer()
        dir = try TestMedia.makeTemporaryDirectory(prefix: String(describing: type(of: self)))
    }

    override func tearDown() {
        server?.stop()
        server = nil
        if let dir { TestMedia.removeTemporaryDirectory(dir) }
        dir = nil
    }
}
