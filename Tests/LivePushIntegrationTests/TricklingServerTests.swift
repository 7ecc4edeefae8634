import Foundation
@testable import LivePush
import XCTest

/// One output's server answers a byte at a time: the outputs that share its send loop go on
/// writing as on time as those on the other loops (their `sendLateness`, same run), and every
/// output records the whole stream at nginx.
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
        // A loaded machine makes every output late; the trickler must make the outputs on its
        // own loop no later than those on the other loops, in the same run. A loop held up by
        // the trickle made its outputs 0.5 s late and more.
        let trickling = try XCTUnwrap(outputs[0].sendLoop, "the trickling output published")
        let healthyOutputs = outputs.dropFirst()
        let sharing = healthyOutputs.filter { $0.sendLoop == trickling }.map(\.sendLateness.worst)
        let others = healthyOutputs.filter { $0.sendLoop != trickling }.map(\.sendLateness.worst)
        print("worst send lateness (ms) of the healthy outputs on the trickler's loop \(trickling): \(sharing.map { $0 / 1000 }); "
              + "on the other loops: \(others.map { $0 / 1000 }); pings trickled: \(pings)")
        XCTAssertFalse(sharing.isEmpty, "an output shares the trickler's loop: \(outputs.map(\.sendLoop))")
        XCTAssertFalse(others.isEmpty, "an output on another loop to compare with: \(outputs.map(\.sendLoop))")
        XCTAssertLessThan((sharing.max() ?? .max) - (others.max() ?? 0), 250_000, "\(healthyOutputs.map(\.sendLateness))")
        for (index, _) in healthy.enumerated() {
            let probe = try FFProbe.run(try await server.awaitRecording(stream: "ok\(index)"))
            XCTAssertEqual(probe.videoPackets.count, 200, "ok\(index) recorded whole")
        }
        let trickled = try FFProbe.run(try await server.awaitRecording(stream: "trickled"))
        XCTAssertEqual(trickled.videoPackets.count, 200, "the trickling path recorded whole too")
    }
}
