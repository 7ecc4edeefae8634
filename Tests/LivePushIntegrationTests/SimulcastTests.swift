import Foundation
import LivePush
import LivePushLoopback
import Synchronization
import XCTest

/// One push, several destinations: each output has its own queue and connection, so a dead
/// one never slows, drops or stops the others.
final class SimulcastTests: XCTestCase {
    private var nginx: NginxRTMPServer?
    private var loopback: FaultLoopback?

    override func tearDown() {
        loopback?.stop()
        nginx?.stop()
    }

    func testAHealthyOutputAndTheRecordingKeepEveryFrameWhileAnotherPathDiesSilently() async throws {
        try XCTSkipUnless(NginxRTMPServer.isAvailable, "nginx + libnginx-mod-rtmp not installed")
        // A 20 s real-time push (the 4 s sample, 5 times). nginx holds a silently dead publisher
        // for 10 s; the second output's path dies at 4 s.
        let nginx = try NginxRTMPServer(dropIdlePublisher: .seconds(10))
        self.nginx = nginx
        let loopback = FaultLoopback(configuration: .init(upstream: "127.0.0.1:\(nginx.port)",
                                                          faults: [try FaultSpec.parse("stale@conn=1,after=4s")]))
        self.loopback = loopback
        let port = try loopback.start()
        let directory = try TestMedia.makeTemporaryDirectory(prefix: "simulcast")
        defer { TestMedia.removeTemporaryDirectory(directory) }
        let local = directory.appendingPathComponent("local.flv").path

        let result = try LivePushCLI.run([
            "push", TestMedia.path(.h264AAC), nginx.url(stream: "direct"),
            "rtmp://127.0.0.1:\(port)/\(NginxRTMPServer.application)/dying",
            "--loop", "5", "--record", local, "--json",
        ], timeout: 90)
        XCTAssertEqual(result.exitCode, 0, result.summary)

        // The dying output reported its own trouble, tagged with its id; the push as a whole did not.
        let objects = result.stdoutString.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let second = objects.filter { $0["output"] as? Int == 1 }.compactMap { $0["event"] as? String }
        XCTAssertTrue(second.contains("connectionLost") && second.contains("staleSession") && second.contains("reconnectSucceeded"),
                      "\(second)")
        let whole = objects.filter { $0["output"] == nil }.compactMap { $0["event"] as? String }
        XCTAssertFalse(whole.contains("connectionLost"), "the first output carried the push throughout: \(whole)")
        XCTAssertEqual(objects.filter { $0["output"] as? Int == 0 }.compactMap { $0["event"] as? String }.filter { $0 == "connectionLost" },
                       [], "the healthy output never lost its connection")

        // Every frame of the five passes, on the healthy output and in the recording.
        // (5 × 174 audio frames less the one a looped push loses at each of the 4 seams.)
        for path in [try await nginx.awaitRecording(stream: "direct"), local] {
            let probe = try FFProbe.run(path)
            probe.assertWellFormed()
            XCTAssertEqual(probe.videoPackets.count, 500, path)
            XCTAssertEqual(probe.audioPackets.count, 866, path)
        }
        // The dying output recovered by itself: nginx recorded its publish after the recovery.
        let recovered = try FFProbe.run(try await nginx.awaitRecording(stream: "dying"))
        recovered.assertWellFormed()
        XCTAssertGreaterThan(recovered.videoPackets.count, 25)
    }

    func testEveryOutputRefusedFailsThePushAndOneRefusedDoesNot() async throws {
        let receiver = RTMPReceiver(configuration: .init(port: 0))
        let good = try receiver.start()
        defer { receiver.stop() }
        let closed = try NginxRTMPServer.freeLoopbackPort()
        let refused = "rtmp://127.0.0.1:\(closed)/live/s"

        var config = PushHelpers.fastConfig()
        let both = LivePusher(config: config)
        let bothEvents = both.events()
        try both.start(file: TestMedia.path(.h264AAC), urls: [refused, refused])
        let failed = try await PushHelpers.collect(both, bothEvents, start: .now, timeout: .seconds(20))
        XCTAssertEqual(failed.error?.code, .connectionRefused)
        XCTAssertEqual(failed.events.filter { if case .output(_, _, .connectFailed) = $0 { true } else { false } }.count, 2)

        config.statsInterval = .zero
        let one = LivePusher(config: config)
        let oneEvents = one.events()
        try one.start(file: TestMedia.path(.h264AAC), urls: [refused, "rtmp://127.0.0.1:\(good)/live/ok"])
        let run = try await PushHelpers.collect(one, oneEvents, start: .now, timeout: .seconds(20))
        XCTAssertNil(run.error, "\(run.eventNames)")
        XCTAssertEqual(run.stats.outputs.map(\.id), [0, 1])
        XCTAssertEqual(run.stats.outputs[1].videoFramesSent, 100)
        let summary = try await receiver.waitForPublishEnd(stream: "ok", timeout: .seconds(10))
        XCTAssertEqual(summary.videoFrames, 100)
        XCTAssertEqual(summary.audioFrames, 174)
    }
    /// `stopOutput` reaches one output through the push's inbox: it unpublishes while the push
    /// goes on (nginx closes its recording before the push ends), and the other output carries
    /// every frame to the end.
    func testStoppingOneOutputLeavesTheOtherCarryingEveryFrame() async throws {
        try XCTSkipUnless(NginxRTMPServer.isAvailable, "nginx + libnginx-mod-rtmp not installed")
        let nginx = try NginxRTMPServer()
        self.nginx = nginx
        var config = PushConfig()
        config.statsInterval = .zero
        let pusher = LivePusher(config: config)
        let events = pusher.events()
        let watched = pusher.events()
        try pusher.start(file: TestMedia.path(.h264AAC), urls: [nginx.url(stream: "kept"), nginx.url(stream: "stopped")])
        let closedWhilePushing = Mutex(false)
        let run = try await PushHelpers.collect(pusher, events, start: .now, timeout: .seconds(60)) { pusher in
            // Output 1's own first frame (not the push's): its recording then holds a picture.
            for await event in watched { if case .output(1, _, .firstFramePushed) = event { break } }
            try pusher.stopOutput(1)
            _ = try await nginx.awaitRecording(stream: "stopped")
            closedWhilePushing.withLock { $0 = pusher.state == .pushing }
        }
        XCTAssertNil(run.error)
        XCTAssertTrue(closedWhilePushing.withLock { $0 }, "the stopped output's recording closed while the push ran (4 s in real time)")
        let kept = try FFProbe.run(try await nginx.awaitRecording(stream: "kept"))
        kept.assertWellFormed()
        XCTAssertEqual(kept.videoPackets.count, 100, "every frame of the 4 s sample")
        let stopped = try FFProbe.run(nginx.recordingPath(stream: "stopped"))
        XCTAssertLessThan(stopped.videoPackets.count, 100)
        XCTAssertThrowsError(try pusher.stopOutput(2), "no output 2")
    }
}
