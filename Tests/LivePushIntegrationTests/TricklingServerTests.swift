import Foundation
import LivePush
import XCTest

/// One output's server answers a byte at a time: the outputs that share its send loop go on
/// writing on time (their `sendLateness`), and every output records the whole stream at nginx.
final class TricklingServerTests: NginxTestCase {
    static let relayScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Support/trickle_relay.py").path

    func testATricklingServerDelaysNoOtherOutputOnItsSendLoop() async throws {
        let python = try XCTUnwrap(ProcessRunner.which("python3"))
        // Ping requests trickled a byte every 40 ms (0.7 s per 18-byte ping), from 1 s into the push.
        let relay = try RunningCLI(executable: python, [Self.relayScript, "\(server.port)", "1", "0.04"])
        defer { relay.interrupt() }
        let listening = await relay.awaitLine(timeout: .seconds(10)) { $0.hasPrefix("port ") }
        let relayPort = try XCTUnwrap(listening.flatMap { Int($0.dropFirst(5)) }, relay.standardError)

        // Outputs are dealt to the send loops in turn: with two healthy outputs per loop, one of
        // them shares the trickling output's loop whatever its turn.
        let loops = max(2, ProcessInfo.processInfo.activeProcessorCount)
        let healthy = (0..<(2 * loops)).map { server.url(stream: "ok\($0)") }
        let urls = ["rtmp://127.0.0.1:\(relayPort)/\(NginxRTMPServer.application)/trickled"] + healthy
        var config = PushConfig()
        config.looping = .times(2)
        config.statsInterval = .zero
        let pusher = LivePusher(config: config)
        let events = pusher.events()
        try pusher.start(file: TestMedia.path(.h264AAC), urls: urls)
        var failure: LivePushError?
        for await event in events {
            if case .stateChanged(.failed(let error)) = event { failure = error }
            if case .stopped = event { break }
        }
        XCTAssertNil(failure)
        let pings = relay.output.filter { $0.hasPrefix("ping ") }.count
        XCTAssertGreaterThanOrEqual(pings, 5, "the relay trickled its pings while the push ran")

        let outputs = pusher.stats().outputs
        XCTAssertEqual(outputs.count, urls.count)
        let worst = outputs.dropFirst().map(\.sendLateness.worst).max() ?? .max
        print("healthy outputs' worst send lateness: \(outputs.dropFirst().map { $0.sendLateness.worst / 1000 }) ms; pings trickled: \(pings)")
        // A stalled loop made them 0.5 s late and more; an unloaded machine keeps them within tens of ms.
        XCTAssertLessThan(worst, 250_000, "\(outputs.dropFirst().map(\.sendLateness))")
        for (index, _) in healthy.enumerated() {
            let probe = try FFProbe.run(try await server.awaitRecording(stream: "ok\(index)"))
            XCTAssertEqual(probe.videoPackets.count, 200, "ok\(index) recorded whole")
        }
        let trickled = try FFProbe.run(try await server.awaitRecording(stream: "trickled"))
        XCTAssertEqual(trickled.videoPackets.count, 200, "the trickling path recorded whole too")
    }
}
