import Foundation
import LivePush
import LivePushLoopback
import XCTest

/// A path that dies silently leaves nginx-rtmp holding our previous publisher: every reconnect
/// is answered "Already publishing" until nginx drops the idle publisher. The loopback relays
/// to a real nginx and plays the dead path (`stale`: the client's side is reset, the server's
/// side stays open and silent; `blackhole`: nothing moves and nothing closes).
final class StaleSessionTests: XCTestCase {
    private var nginx: NginxRTMPServer?
    private var loopback: FaultLoopback?

    override func tearDown() {
        loopback?.stop()
        nginx?.stop()
    }

    /// nginx (optionally dropping idle publishers) behind a loopback with `faults`; returns the
    /// loopback's URL for `stream`.
    private func startRelay(dropIdlePublisher: Duration?, faults: [String], stream: String) throws -> String {
        try XCTSkipUnless(NginxRTMPServer.isAvailable, "nginx + libnginx-mod-rtmp not installed")
        let nginx = try NginxRTMPServer(dropIdlePublisher: dropIdlePublisher)
        self.nginx = nginx
        let loopback = FaultLoopback(configuration: .init(upstream: "127.0.0.1:\(nginx.port)",
                                                          faults: try faults.map { try FaultSpec.parse($0) }))
        self.loopback = loopback
        let port = try loopback.start()
        return "rtmp://127.0.0.1:\(port)/\(NginxRTMPServer.application)/\(stream)"
    }

    private func realTimeConfig() -> PushConfig {
        var config = PushConfig()  // default retry count, interval and stale-session grace
        config.looping = .forever
        config.statsInterval = .milliseconds(100)
        return config
    }

    func testNginxAnswersAlreadyPublishingWhileItHoldsTheStalePublisher() async throws {
        // The model checked against the real server: with the old publisher's socket held open,
        // a fresh publish of the same name is rejected with nginx's own words.
        let url = try startRelay(dropIdlePublisher: nil, faults: ["stale@conn=1,after=1500ms"], stream: "held")
        let pusher = LivePusher(config: realTimeConfig())
        let events = EventLog(pusher.events())
        try pusher.start(file: TestMedia.path(.h264AAC), url: url)
        defer { try? pusher.stop() }
        try await events.await("connectionLost") { $0.name == "connectionLost" }

        var config = PushConfig()
        config.pacing = .asFastAsPossible
        let second = try await PushHelpers.push(file: TestMedia.path(.h264AAC), url: url, config: config, timeout: .seconds(20))
        XCTAssertEqual(second.error?.code, .publishRejected, "a first connect is not retried: \(second.eventNames)")
        XCTAssertTrue(second.error?.detail?.contains("Already publishing") == true, "\(String(describing: second.error))")
    }

    func testTheLoopbackAloneModelsTheHeldSessionAsNginxDoes() async throws {
        // No nginx: the loopback's receiver holds the name for 6 s after the silent death and
        // answers "Already publishing" meanwhile, as the nginx test above shows the real server does.
        // (The hold is long enough for the first reconnect to fall inside it on a busy machine.)
        let loopback = FaultLoopback(configuration: .init(faults: [try FaultSpec.parse("stale=6s@conn=1,after=1500ms")]))
        self.loopback = loopback
        let port = try loopback.start()
        let pusher = LivePusher(config: realTimeConfig())
        let events = EventLog(pusher.events())
        try pusher.start(file: TestMedia.path(.h264AAC), url: "rtmp://127.0.0.1:\(port)/live/model")
        defer { try? pusher.stop() }
        try await events.await("staleSession") { $0.name == "staleSession" }
        try await events.await("reconnectSucceeded", timeout: .seconds(30)) { $0.name == "reconnectSucceeded" }
        try pusher.stop()
        try await events.await("stopped") { $0.name == "stopped" }
        _ = try await loopback.waitForPublishEnd(stream: "model", timeout: .seconds(10))
        XCTAssertEqual(loopback.summaries().filter { $0.stream == "model" }.map(\.endReason), ["stale", "FCUnpublish"])
    }

    func testRecoversByItselfWhenNginxDropsTheIdlePublisher() async throws {
        let url = try startRelay(dropIdlePublisher: .seconds(3), faults: ["stale@conn=1,after=2s"], stream: "stale")
        let nginx = try XCTUnwrap(nginx)
        let pusher = LivePusher(config: realTimeConfig())
        let events = EventLog(pusher.events())
        try pusher.start(file: TestMedia.path(.h264AAC), url: url)
        defer { try? pusher.stop() }

        try await events.await("staleSession", timeout: .seconds(20)) { $0.name == "staleSession" }
        try await events.await("reconnectSucceeded", timeout: .seconds(30)) { $0.name == "reconnectSucceeded" }
        let all = await events.all
        let stale = all.compactMap { event -> Int? in if case .staleSession(let attempt, _, _) = event { attempt } else { nil } }
        XCTAssertEqual(stale.first, 1, "attempts counted from 1")
        XCTAssertEqual(stale, Array(1...stale.count), "one event per rejection, numbered")
        XCTAssertFalse(all.contains { $0.name == "reconnectFailed" })
        let retries = all.filter { $0.name == "reconnectStarted" }.count
        XCTAssertLessThanOrEqual(retries, 2, "stale-session rejections do not spend the retry count")

        // The stale publisher's recording was closed when nginx dropped it; forget its marker so
        // that the wait below sees the recording of the recovered publish.
        let marker = nginx.recordingDoneMarkerPath(stream: "stale")
        try await waitUntil("the stale publisher's recording is closed") { FileManager.default.fileExists(atPath: marker) }
        try FileManager.default.removeItem(atPath: marker)

        // Wall time, not media time: right after the reconnect the queued backlog goes out in a burst.
        let recoveredAt = pusher.stats().elapsed
        try await events.await("3 s of pushing after recovery") {
            if case .stats(let s) = $0 { s.elapsed >= recoveredAt + .seconds(3) } else { false }
        }
        try pusher.stop()
        try await events.await("stopped") { $0.name == "stopped" }

        let probe = try FFProbe.run(try await nginx.awaitRecording(stream: "stale"))
        probe.assertWellFormed()
        XCTAssertGreaterThanOrEqual(probe.presentationSpan, 2.8, "the recovered part arrived whole")
        let gaps = zip(probe.videoPackets, probe.videoPackets.dropFirst()).compactMap { a, b in
            a.dtsTime.flatMap { x in b.dtsTime.map { $0 - x } }
        }
        XCTAssertLessThanOrEqual(gaps.max() ?? 0, 0.1, "no holes in the video after recovery")
    }

    func testGivesUpCleanlyWhenTheServerNeverLetsGo() async throws {
        let url = try startRelay(dropIdlePublisher: nil, faults: ["stale@conn=1,after=1500ms"], stream: "never")
        var config = realTimeConfig()
        config.connectRetryCount = 2
        config.connectRetryInterval = .milliseconds(500)
        config.staleSessionGrace = .seconds(3)
        let pusher = LivePusher(config: config)
        let events = EventLog(pusher.events())
        try pusher.start(file: TestMedia.path(.h264AAC), url: url)
        defer { try? pusher.stop() }

        try await events.await("reconnectFailed", timeout: .seconds(20)) { $0.name == "reconnectFailed" }
        let all = await events.all
        let failed = try XCTUnwrap(all.compactMap { event -> LivePushError? in
            if case .reconnectFailed(let e) = event { e } else { nil }
        }.first)
        XCTAssertEqual(failed.code, .reconnectFailed)
        XCTAssertTrue(failed.message.contains("previous publisher"), failed.message)
        let staleEvents = all.filter { $0.name == "staleSession" }.count
        XCTAssertGreaterThanOrEqual(staleEvents, 2, "kept trying within the grace")
        XCTAssertEqual(pusher.state, .reconnecting, "waits for reconnect() or stop()")
        try pusher.stop()
        try await events.await("stopped") { $0.name == "stopped" }
    }

    func testBlackholedPathTimesOutThenRecoversOnceNginxDropsTheIdlePublisher() async throws {
        // As fast as nginx takes it, so that the dead path fills the socket buffers at once; nginx
        // drops the idle publisher 8 s after the path died, the pusher notices after 1.5 s.
        let url = try startRelay(dropIdlePublisher: .seconds(8), faults: ["blackhole@conn=1,messages=300"], stream: "hole")
        var config = PushHelpers.fastConfig()
        config.looping = .times(60)
        config.sendDataTimeout = .milliseconds(1500)
        config.socketSendBufferBytes = 32 * 1024
        let pusher = LivePusher(config: config)
        let events = EventLog(pusher.events())
        try pusher.start(file: TestMedia.path(.h264AAC), url: url)
        defer { try? pusher.stop() }

        try await events.await("sendDataTimeout", timeout: .seconds(60)) { $0.name == "sendDataTimeout" }
        try await events.await("reconnectSucceeded", timeout: .seconds(30)) { $0.name == "reconnectSucceeded" }
        let names = await events.names
        XCTAssertFalse(names.contains("reconnectFailed"))
        // Whether nginx still held the old publisher when the pusher came back depends on how
        // long filling the buffers took on a busy machine; what it said decides what we expect.
        let log = try String(contentsOfFile: try XCTUnwrap(nginx).errorLogPath, encoding: .utf8)
        XCTAssertEqual(names.contains("staleSession"), log.contains("already publishing"), "\(names)")
        try pusher.stop()
        try await events.await("stopped") { $0.name == "stopped" }
    }

    func testCLIExitsWithReconnectFailedWhenTheServerNeverLetsGo() throws {
        let url = try startRelay(dropIdlePublisher: nil, faults: ["stale@conn=1,after=1500ms"], stream: "cli")
        let result = try LivePushCLI.run(["push", TestMedia.path(.h264AAC), url, "--loop", "forever",
                                          "--retry-count", "2", "--retry-interval", "500", "--stale-grace", "5"],
                                         timeout: 40)
        XCTAssertFalse(result.timedOut, "the CLI must end by itself: \(result.summary)")
        XCTAssertEqual(result.exitCode, 1, result.summary)
        XCTAssertTrue(result.stderrString.contains("805439750 [0x30020906] reconnectFailed"), result.stderrString)
        XCTAssertTrue(result.stderrString.contains("--retry-count") && result.stderrString.contains("--stale-grace"),
                      result.stderrString)
        XCTAssertTrue(result.stdoutString.contains("[network] staleSession"), result.stdoutString)
        XCTAssertLessThan(result.elapsed, 30, "bounded: 1.5 s of push + 5 s of grace + retries")
    }

    func testTheLocalRecordingKeepsEveryFrameWhileThePathIsDead() async throws {
        // Real time, two passes of the 4 s sample; the path dies at 2 s and nginx holds the stale
        // publisher for 3 s: the network output loses that stretch, the recording nothing.
        let url = try startRelay(dropIdlePublisher: .seconds(3), faults: ["stale@conn=1,after=2s"], stream: "rec")
        let directory = try TestMedia.makeTemporaryDirectory(prefix: "record")
        defer { TestMedia.removeTemporaryDirectory(directory) }
        let path = directory.appendingPathComponent("local.flv").path
        let result = try LivePushCLI.run(["push", TestMedia.path(.h264AAC), url, "--loop", "2", "--record", path, "--json"],
                                         timeout: 60)
        XCTAssertEqual(result.exitCode, 0, result.summary)
        XCTAssertTrue(result.stdoutString.contains("\"event\":\"staleSession\""), result.stdoutString)
        XCTAssertTrue(result.stdoutString.contains("\"event\":\"reconnectSucceeded\""), result.stdoutString)
        XCTAssertTrue(result.stdoutString.contains("\"recording\":{\"bytes\":"), "the stats count what was recorded")

        let probe = try FFProbe.run(path)
        probe.assertWellFormed()
        XCTAssertEqual(probe.videoPackets.count, 200, "every video frame of both passes")
        // 2 × 174 less the one AAC frame every looped push loses at the seam (the same without a fault).
        XCTAssertEqual(probe.audioPackets.count, 347, "every audio frame of both passes")
        let dts = probe.videoPackets.compactMap(\.dtsTime)
        XCTAssertLessThanOrEqual(zip(dts, dts.dropFirst()).map { $1 - $0 }.max() ?? 1, 0.05, "no holes")
    }

    func testARecordingThatCannotBeCreatedFailsTheStart() throws {
        var config = PushConfig()
        config.recordPath = "/nonexistent-dir/x.flv"
        let pusher = LivePusher(config: config)
        XCTAssertThrowsError(try pusher.start(file: TestMedia.path(.h264AAC), url: "rtmp://127.0.0.1:1/live/s")) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .recordFailed)
        }
        XCTAssertEqual(pusher.state, .idle)
    }
}
