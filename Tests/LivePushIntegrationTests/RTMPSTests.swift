import Foundation
import LivePush
import XCTest

/// rtmps://: the push goes through TLS (nginx's stream module terminates it, as a CDN edge
/// does) to nginx-rtmp, which records what arrived.
final class RTMPSTests: XCTestCase {
    private var server: NginxRTMPServer?

    override func tearDown() {
        server?.stop()
        server = nil
    }

    private static var streamModuleInstalled: Bool {
        FileManager.default.fileExists(atPath: "/usr/lib/nginx/modules/ngx_stream_module.so")
    }

    func testPushOverTLSArrivesWhole() async throws {
        try XCTSkipUnless(NginxRTMPServer.isAvailable && Self.streamModuleInstalled, "nginx, rtmp and stream modules needed")
        let server = try NginxRTMPServer(tls: true)
        self.server = server
        let url = try XCTUnwrap(server.tlsURL(stream: "secure"))
        let run = try await PushHelpers.push(file: TestMedia.path(.h264AAC), url: url)
        XCTAssertNil(run.error)
        XCTAssertEqual(run.eventNames, ["pushStarted", "firstFramePushed", "stopped"])
        let probe = try FFProbe.run(try await server.awaitRecording(stream: "secure"))
        probe.assertWellFormed()
        XCTAssertEqual(probe.videoPackets.count, 100)
        XCTAssertEqual(probe.audioPackets.count, 174)
    }

    func testPlainRTMPToTheTLSPortFails() async throws {
        try XCTSkipUnless(NginxRTMPServer.isAvailable && Self.streamModuleInstalled, "nginx, rtmp and stream modules needed")
        let server = try NginxRTMPServer(tls: true)
        self.server = server
        // Proves the port really speaks TLS: an rtmp:// handshake is not answered as RTMP.
        let plain = try XCTUnwrap(server.tlsURL(stream: "plain")).replacingOccurrences(of: "rtmps://", with: "rtmp://")
        var config = PushHelpers.fastConfig()
        config.responseTimeout = .seconds(2)
        let run = try await PushHelpers.push(file: TestMedia.path(.h264AAC), url: plain, config: config, timeout: .seconds(20))
        XCTAssertEqual(run.error?.code, .handshakeFailed, String(describing: run.error))
    }
}
