import Foundation
import XCTest

/// `livepush serve` as the hostile-peer tests run it.
enum ServeProcess {
    /// Starts `livepush serve` on a free port, recording into `directory`; the process and its port.
    static func start(recordingInto directory: URL, _ extra: [String] = []) async throws -> (RunningCLI, Int) {
        let serve = try RunningCLI(["serve", "--port", "0", "--record", directory.path] + extra)
        let started = await serve.awaitLine { $0.hasPrefix("listening on ") }
        let banner = try XCTUnwrap(started, "serve did not start: \(serve.standardError)")
        let port = try XCTUnwrap(banner.split(separator: ":").dropFirst(2).first?.split(separator: "/").first.flatMap { Int($0) })
        return (serve, port)
    }
}
