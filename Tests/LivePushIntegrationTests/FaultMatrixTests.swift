import Foundation
import LivePush
import LivePushLoopback
import XCTest

/// Every fault of the loopback, pushed through for real: the exact callbacks and code, a bounded
/// time, and for recoverable faults a stream that arrives whole and well-formed afterwards.
/// The fault matrix of docs/loopback.md is this file in table form.
final class FaultMatrixTests: XCTestCase {
    private var loopback: FaultLoopback?
    private var record: URL!

    override func setUpWithError() throws {
        record = try TestMedia.makeTemporaryDirectory(prefix: "fault-matrix")
    }

    override func tearDown() {
        loopback?.stop()
        loopback = nil
        if let record { TestMedia.removeTemporaryDirectory(record) }
    }

    private func startLoopback(_ specs: [String], upstream: String? = nil) throws -> FaultLoopback {
        let rules = try specs.map { try FaultSpec.parse($0) }
        let loopback = FaultLoopback(configuration: .init(upstream: upstream, recordDirectory: record.path, faults: rules))
        _ = try loopback.start()
        self.loopback = loopback
        return loopback
    }

    private func config(fast: Bool = false, loops: PushConfig.Looping = .once) -> PushConfig {
        var config = PushConfig()
        config.pacing = fast ? .asFastAsPossible : .realTime
        config.looping = loops
        config.statsInterval = .milliseconds(100)
        config.responseTimeout = .seconds(2)
        config.connectRetryInterval = .milliseconds(100)
        config.sendDataTimeout = .milliseconds(1000)
        return config
    }

    private func url(_ loopback: FaultLoopback, _ stream: String) -> String {
        "rtmp://127.0.0.1:\(loopback.port)/live/\(stream)"
    }

    /// The seed's callbacks, in order; `retryScheduled` (when and why the next attempt comes)
    /// follows each `reconnectStarted` and is checked on its own.
    private func callbacks(_ run: PushRun) -> [String] {
        run.eventNames.filter { $0 != "stats" && $0 != "retryScheduled" }
    }

    // MARK: - Connect-time faults: connectFailed with a specific code, no retry

    private func assertConnectFails(_ spec: String, _ code: LivePushError.Code, line: UInt = #line) async throws {
        let loopback = try startLoopback([spec])
        let run = try await PushHelpers.push(file: TestMedia.path(.h264AAC), url: url(loopback, "s"), config: config(),
                                             timeout: .seconds(15))
        XCTAssertEqual(callbacks(run), ["connectFailed", "sdkError", "stopped"], spec, line: line)
        XCTAssertEqual(run.error?.code, code, "\(spec): \(String(describing: run.error))", line: line)
        XCTAssertLessThan(run.elapsed, .seconds(8), spec, line: line)
    }

    func testRefusedConnection() async throws {
        try await assertConnectFails("refuse", .handshakeFailed)
    }

    func testCloseDuringHandshake() async throws {
        try await assertConnectFails("close-handshake", .handshakeFailed)
    }

    func testConnectRejected() async throws {
        try await assertConnectFails("reject-connect", .connectRejected)
    }

    func testPublishRejectedBadName() async throws {
        try await assertConnectFails("reject-publish=badname", .publishRejected)
    }

    func testPublishRejectedAlreadyPublishing() async throws {
        try await assertConnectFails("reject-publish=already", .publishRejected)
    }

    func testMalformedReply() async throws {
        try await assertConnectFails("malformed-reply", .startPushTimeout)
    }

    func testTruncatedReply() async throws {
        try await assertConnectFails("truncated-reply", .connectRejected)
    }

    func testServerStalledDuringConnect() async throws {
        try await assertConnectFails("stall", .handshakeFailed)
    }

    // MARK: - Mid-stream faults: lost, reconnect, continue

    /// Pushes `sample` in real time through `specs`, expecting one loss and one reconnect.
    private func assertRecovers(_ specs: [String], fast: Bool = false, passes: Int = 20, expected: [String]? = nil,
                                firstFrameMayFollowReconnect: Bool = false, line: UInt = #line) async throws -> (PushRun, [PublishSummary]) {
        let loopback = try startLoopback(specs)
        var config = config(fast: fast, loops: fast ? .times(passes) : .once)
        config.socketSendBufferBytes = 32 * 1024
        // A hang guard: 60 --fast passes go through the debug loopback as fast as the machine allows.
        let run = try await PushHelpers.push(file: TestMedia.path(.h264AAC), url: url(loopback, "r"),
                                             config: config, timeout: .seconds(90))
        XCTAssertNil(run.error, "\(specs)", line: line)
        let expected = expected ?? ["pushStarted", "firstFramePushed", "connectionLost", "reconnectStarted",
                                    "reconnectSucceeded", "stopped"]
        if firstFrameMayFollowReconnect {
            // Whether the first frame got out before the server hung up is a race either way.
            XCTAssertEqual(callbacks(run).filter { $0 != "firstFramePushed" }, expected.filter { $0 != "firstFramePushed" },
                           "\(specs)", line: line)
            XCTAssertEqual(callbacks(run).filter { $0 == "firstFramePushed" }.count, 1, line: line)
        } else {
            XCTAssertEqual(callbacks(run), expected, "\(specs)", line: line)
        }
        // The push has ended on our side; wait until the loopback has closed the last publish too.
        _ = try await loopback.waitForPublishEnd(stream: "r", timeout: .seconds(10))
        // A stalled connection never tells the loopback that it ended: only the new one may be summarised.
        let summaries = loopback.summaries().sorted { $0.publishID < $1.publishID }
        let after = try XCTUnwrap(summaries.last, line: line)
        XCTAssertEqual(after.firstVideoFrameIsKeyframe, true, "resumes on a keyframe", line: line)
        XCTAssertTrue(after.monotonic, line: line)
        if (summaries.first?.videoFrames ?? 0) > 0 {
            XCTAssertGreaterThan(after.firstTimestampMs ?? 0, 0, "timestamps continue, no jump back to 0", line: line)
        }
        if summaries.count == 2, let lastBefore = summaries[0].lastTimestampMs, let firstAfter = after.firstTimestampMs {
            XCTAssertGreaterThan(firstAfter, lastBefore, "timestamps keep increasing", line: line)
            // In real time the media sent runs with the wall clock, so the outage bounds the gap.
            // In --fast mode the output resends its last GOP stamped after the last packet it
            // *sent*; what was still in flight (our send buffer and the server's receive buffer,
            // seconds of media at full speed) never arrived, so the server sees a gap of that
            // size while no frame is lost (testFastPushLosesNoFrameAcrossAReset counts them).
            // The outage is what the push saw, from the loss to the reconnect (a busy machine
            // takes longer to reconnect); the output resumes at the next keyframe (1 s GOP).
            if !fast, let lost = run.time(of: "connectionLost"), let back = run.time(of: "reconnectSucceeded") {
                let outageMs = Int((back - lost) / .milliseconds(1))
                XCTAssertLessThan(firstAfter - lastBefore, outageMs + 1000 + 500, "no gap larger than the outage", line: line)
            }
        }
        try FFProbe.run(try XCTUnwrap(after.recordingPath)).assertWellFormed(line: line)
        return (run, summaries)
    }

    func testResetAfterBytesRecovers() async throws {
        _ = try await assertRecovers(["reset-after-bytes=150k@conn=1"])
    }

    func testResetAfterTimeRecovers() async throws {
        _ = try await assertRecovers(["reset-after=1s@conn=1"])
    }

    func testCloseAfterPublishRecovers() async throws {
        // The server hangs up before the first frame could be sent.
        let (_, summaries) = try await assertRecovers(
            ["close-after-publish@conn=1"],
            expected: ["pushStarted", "connectionLost", "reconnectStarted", "reconnectSucceeded", "firstFramePushed", "stopped"],
            firstFrameMayFollowReconnect: true)
        XCTAssertLessThan(summaries.first?.videoFrames ?? 0, 5, "the server hung up right after the publish started")
    }

    /// A paused output sends nothing and nobody wakes its send loop for it: only its own due
    /// reads of the server (``PublishingPace/idleServiceInterval``; the loop no longer sweeps
    /// every connection) hear the server hang up, while the push is still paused.
    func testAPausedOutputHearsItsServerHangUp() async throws {
        let loopback = try startLoopback(["reset-after=3s@conn=1"])
        let pusher = LivePusher(config: config(loops: .forever))
        let (started, lost, ended) = (pusher.events(), pusher.events(), pusher.events())
        let start = ContinuousClock.now
        try pusher.start(file: TestMedia.path(.h264AAC), url: url(loopback, "paused"))
        defer { try? pusher.stop() }  // when a wait below fails; stopping twice is nothing
        _ = try await PushHelpers.awaitEvent(started) { $0.name == "firstFramePushed" }
        try pusher.pause()
        XCTAssertEqual(pusher.state, .paused)
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(2.5), "paused after the reset: this proves nothing")
        _ = try await PushHelpers.awaitEvent(lost, timeout: .seconds(10)) { $0.name == "connectionLost" }
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, .seconds(2.9), "the loss came before the reset")
        try pusher.stop()
        _ = try await PushHelpers.awaitEvent(ended) { $0.name == "stopped" }
    }

    func testFastPushLosesNoFrameAcrossAReset() async throws {
        let (run, summaries) = try await assertRecovers(["reset-after-bytes=1m@conn=1"], fast: true)
        XCTAssertEqual(summaries.count, 2)
        let arrived = summaries.reduce(0) { $0 + $1.videoFrames }
        XCTAssertGreaterThanOrEqual(arrived, 100 * 20, "every frame of the 20 passes arrived (some twice)")
        XCTAssertGreaterThanOrEqual(run.stats.videoFramesSent, arrived)
    }

    func testStalledServerGivesSendDataTimeoutThenRecovers() async throws {
        let (run, _) = try await assertRecovers(
            ["stall@messages=300,conn=1"], fast: true, passes: 60,
            expected: ["pushStarted", "firstFramePushed", "sendDataTimeout", "connectionLost", "reconnectStarted",
                       "reconnectSucceeded", "stopped"])
        let lost = run.events.compactMap { if case .connectionLost(let e) = $0 { e } else { nil } }.first
        XCTAssertEqual(lost?.code, .sendDataTimeout)
    }

    func testFailTwiceThenSucceed() async throws {
        let loopback = try startLoopback(["reset-after=1s@conn=1", "refuse@conn=2-3"])
        let run = try await PushHelpers.push(file: TestMedia.path(.h264AAC), url: url(loopback, "twice"), config: config(),
                                             timeout: .seconds(30))
        XCTAssertNil(run.error)
        XCTAssertEqual(callbacks(run), ["pushStarted", "firstFramePushed", "connectionLost",
                                        "reconnectStarted", "reconnectStarted", "reconnectStarted", "reconnectSucceeded", "stopped"])
        XCTAssertEqual(run.events.compactMap { if case .reconnectStarted(let n) = $0 { n } else { nil } }, [1, 2, 3])
    }

    func testRetriesUsedUpThenManualReconnect() async throws {
        let loopback = try startLoopback(["reset-after=1s@conn=1", "refuse@conn=2-99"])
        var config = config()
        config.connectRetryCount = 2
        let pusher = LivePusher(config: config)
        let events = EventLog(pusher.events())
        try pusher.start(file: TestMedia.path(.h264AAC), url: url(loopback, "manual"))
        defer { try? pusher.stop() }
        try await events.await("reconnectFailed") { $0.name == "reconnectFailed" }
        let failure = await events.all.compactMap { if case .reconnectFailed(let e) = $0 { e } else { nil } }.first
        XCTAssertEqual(failure?.code, .reconnectFailed)
        XCTAssertEqual(pusher.state, .reconnecting)
        loopback.setFaults([])
        try pusher.reconnect()
        try await events.await("reconnectSucceeded") { $0.name == "reconnectSucceeded" }
        try await events.await("stopped") { $0.name == "stopped" }
        let names = await events.names.filter { $0 != "stats" && $0 != "stateChanged" }
        // Each wait announces its attempt, and when and why it comes (`retryScheduled`); the
        // manual reconnect is made at once, so it has no wait to announce.
        XCTAssertEqual(names, ["pushStarted", "firstFramePushed", "connectionLost", "reconnectStarted", "retryScheduled",
                               "reconnectStarted", "retryScheduled", "reconnectFailed", "sdkError", "reconnectStarted",
                               "reconnectSucceeded", "stopped"])
        XCTAssertEqual(pusher.state, .stopped)
    }

    /// `retryForever()` (a channel, `--retry-count forever`): a refused first connect is not the
    /// end; each wait is announced with its cause, and the push publishes once the server takes it.
    func testRetryForeverRetriesTheFirstConnectUntilTheServerTakesIt() async throws {
        let loopback = try startLoopback(["refuse@conn=1-3"])
        var config = config()
        config.retryForever()
        config.connectRetryInterval = .milliseconds(100)
        let pusher = LivePusher(config: config)
        let events = EventLog(pusher.events())
        try pusher.start(file: TestMedia.path(.h264AAC), url: url(loopback, "forever"))
        defer { try? pusher.stop() }
        try await events.await("stopped") { $0.name == "stopped" }
        let names = await events.names.filter { $0 != "stats" && $0 != "stateChanged" }
        XCTAssertEqual(names, ["retryScheduled", "retryScheduled", "retryScheduled", "pushStarted", "firstFramePushed", "stopped"])
        let waits = await events.all.compactMap { event -> (Int, Duration, LivePushError.Code)? in
            if case .retryScheduled(let attempt, let delay, let cause) = event { (attempt, delay, cause.code) } else { nil }
        }
        XCTAssertEqual(waits.map(\.0), [1, 2, 3])
        // The loopback's `refuse` accepts the TCP connection and closes it: the handshake fails.
        XCTAssertEqual(Set(waits.map(\.2)), [.handshakeFailed])
        // Doubling from 100 ms, each shortened by up to a quarter.
        for (index, wait) in waits.enumerated() {
            let full = Duration.milliseconds(100 << index)
            XCTAssertTrue(wait.1 <= full && wait.1 >= full * 0.75, "wait \(index + 1): \(wait.1)")
        }
        XCTAssertEqual(pusher.state, .stopped)
    }

    // MARK: - Continuous faults

    func testThrottleReportsNetworkPoorAndRecovery() async throws {
        let loopback = try startLoopback(["throttle=20k"])
        var config = config(loops: .forever)
        config.sendQueueMaxDuration = .seconds(4)
        // A small socket buffer makes the backlog show in the send queue within seconds.
        config.socketSendBufferBytes = 16 * 1024
        // On loopback the kernel reopens a closed receive window only once 64 KiB (the loopback
        // MSS) have been read: at 20 kB/s that is over 3 s without an acknowledgement, as long
        // as the default send timeout. A real link that slow acknowledges every segment.
        config.sendDataTimeout = .seconds(10)
        let pusher = LivePusher(config: config)
        let events = EventLog(pusher.events())
        try pusher.start(file: TestMedia.path(.h264AAC), url: url(loopback, "throttle"))
        defer { try? pusher.stop() }
        // A hang guard (AdaptiveBitrateTests measured over 20 s once in CI), not a measurement.
        try await events.await("networkPoor", timeout: .seconds(45)) { $0.name == "networkPoor" }
        // The link gets fast again (a generous throttle rather than none keeps the rate logic in play).
        loopback.setFaults([try FaultSpec.parse("throttle=10m")])
        do {
            try await events.await("networkRecovered") { $0.name == "networkRecovered" }
        } catch {
            let last = await events.all.compactMap { if case .stats(let s) = $0 { s } else { nil } }.suffix(3)
            XCTFail("\(error): last stats \(last.map { "queued \($0.queuedDuration) µs, sent \($0.bytesSent) B, dropped \($0.droppedFrames.total)" })")
            throw error
        }
        // What waited in the send queue went out late, and the output counted it at the write.
        let lateness = pusher.stats().sendLateness
        XCTAssertGreaterThan(lateness.packetsLaterThan100ms, 0, "\(lateness)")
        XCTAssertGreaterThan(lateness.worst, 100_000)
        try pusher.stop()
        try await events.await("stopped") { $0.name == "stopped" }
        let names = await events.names
        XCTAssertFalse(names.contains("connectionLost"), "a slow network is not a lost one")
    }

    func testLatencyOnlyDelays() async throws {
        let loopback = try startLoopback(["latency=200ms"])
        let run = try await PushHelpers.push(file: TestMedia.path(.h264AAC), url: url(loopback, "late"), config: config(),
                                             timeout: .seconds(20))
        XCTAssertNil(run.error)
        XCTAssertEqual(callbacks(run), ["pushStarted", "firstFramePushed", "stopped"])
        let summary = try await loopback.waitForPublishEnd(stream: "late", timeout: .seconds(10))
        // The loopback drops what it still delays when the client closes, so the last 200 ms
        // of a real-time push may be missing; a slow link is no reason to lose the connection.
        XCTAssertGreaterThanOrEqual(summary.videoFrames, 90)
    }

    // MARK: - Relay to nginx-rtmp

    func testResetWhileRelayingToNginxRecoversInTheRecording() async throws {
        try XCTSkipUnless(NginxRTMPServer.isAvailable, "nginx + libnginx-mod-rtmp not installed")
        let nginx = try NginxRTMPServer()
        defer { nginx.stop() }
        let loopback = try startLoopback(["reset-after=1500ms@conn=1"], upstream: "127.0.0.1:\(nginx.port)")
        let run = try await PushHelpers.push(file: TestMedia.path(.bFrames), url: url(loopback, "relay"), config: config(),
                                             timeout: .seconds(30))
        XCTAssertNil(run.error)
        XCTAssertEqual(callbacks(run), ["pushStarted", "firstFramePushed", "connectionLost", "reconnectStarted",
                                        "reconnectSucceeded", "stopped"])
        // nginx records each publish anew, re-based to 0: the recording is the stream after the
        // reconnect (timestamp continuity is checked in terminating mode above).
        let recording = try await nginx.awaitRecording(stream: "relay")
        let probe = try FFProbe.run(recording)
        probe.assertWellFormed()
        XCTAssertGreaterThan(probe.videoPackets.count, 25)
    }
}
