import XCTest
@testable import LivePush

/// ``OutputState`` driven by hand: the events an output's producer, send loop, connection
/// workers and app send it, and what each asks for, with no sockets, threads or clock.
final class OutputStateTests: XCTestCase {
    private let url = try! PushURL("rtmp://127.0.0.1/live/test")

    private func state(fast: Bool = false, queueSeconds: Int = 2) -> OutputState {
        var config = PushConfig()
        config.pacing = fast ? .asFastAsPossible : .realTime
        config.sendQueueMaxDuration = .seconds(queueSeconds)
        return OutputState(config: config, url: url, now: 0)
    }

    /// Frame `index` of a 25 fps stream, a keyframe every 25.
    private func video(_ index: Int, bytes: Int = 1000) -> MediaPacket {
        MediaPacket(kind: .video, data: [UInt8](repeating: 0, count: bytes), dts: Int64(index) * 40_000,
                    pts: Int64(index) * 40_000, importance: index % 25 == 0 ? .key : .reference)
    }

    private func takePacket(_ state: inout OutputState, now: Int64 = 0) -> MediaPacket? {
        if case .packet(let packet) = state.take(afterSending: nil, now: now).take { return packet }
        return nil
    }

    func testAWaitingSenderIsWokenOnceABatchIsQueuedNotPerPacket() {
        var state = state()
        XCTAssertNil(takePacket(&state), "nothing queued: the sender waits")
        var wakes: [Int] = []
        for i in 0..<30 where state.push(video(i), now: 0).wakesSender { wakes.append(i) }
        // Real time: two pacing batches of media (200 ms) wake it, once.
        XCTAssertEqual(wakes, [5])
        XCTAssertFalse(state.producerSleeps(), "woken already")
    }

    func testAProducerAboutToSleepWakesAWaitingSenderOnlyForWork() {
        var state = state()
        XCTAssertFalse(state.producerSleeps(), "the sender is not waiting")
        XCTAssertNil(takePacket(&state))
        XCTAssertFalse(state.producerSleeps(), "waiting, but nothing queued")
        _ = state.push(video(0), now: 0)
        XCTAssertTrue(state.producerSleeps())
        XCTAssertFalse(state.producerSleeps(), "one wake-up per wait")
    }

    func testAFullFastQueueHoldsTheProducerUntilItDrainsToHalf() {
        var state = state(fast: true, queueSeconds: 1)
        for i in 0...26 { _ = state.push(video(i), now: 0) }
        XCTAssertTrue(state.room.isFull)
        XCTAssertFalse(state.room.isConnected)
        XCTAssertTrue(state.startWaitingForRoom())
        var wokenAfter: [Int] = []
        for taken in 1...20 where state.take(afterSending: nil, now: 0).wakesProducer { wokenAfter.append(taken) }
        // 27 frames span 1.04 s; at most half (0.5 s) is 13 frames left, after 14 taken.
        XCTAssertEqual(wokenAfter, [14], "woken once, at half")
        XCTAssertFalse(state.producerWaiting)
    }

    func testASenderWithNothingToSendReleasesAWaitingProducer() {
        var state = state(fast: true, queueSeconds: 1)
        for i in 0...26 { _ = state.push(video(i), now: 0) }
        XCTAssertTrue(state.startWaitingForRoom())
        _ = state.setPaused(true)
        XCTAssertFalse(state.producerWaiting, "a command wakes it")
        XCTAssertTrue(state.startWaitingForRoom())
        let taken = state.take(afterSending: nil, now: 0)
        guard case .none = taken.take else { return XCTFail("paused: nothing is taken") }
        XCTAssertTrue(taken.wakesProducer)
    }

    func testAStoppedOutputIsNeverWaitedForAndTakesNoPackets() {
        var state = state(fast: true, queueSeconds: 1)
        for i in 0...26 { _ = state.push(video(i), now: 0) }
        XCTAssertTrue(state.startWaitingForRoom())
        XCTAssertEqual(state.stop(), OutputState.Wake(sender: true, producer: true))
        XCTAssertFalse(state.room.isFull)
        XCTAssertFalse(state.startWaitingForRoom())
        let before = state.snapshot(now: 0).queuedPackets
        _ = state.push(video(27), now: 0)
        XCTAssertEqual(state.snapshot(now: 0).queuedPackets, before)
        guard case .ended(.stopped) = state.take(afterSending: nil, now: 0).take else { return XCTFail("a stop ends the pump") }
    }

    func testPauseHoldsTheQueueAndTheEndWaitsForItToDrain() {
        var state = state()
        for i in 0..<3 { _ = state.push(video(i), now: 0) }
        _ = state.finishSource()
        _ = state.setPaused(true)
        XCTAssertNil(takePacket(&state))
        _ = state.setPaused(false)
        XCTAssertEqual((0..<3).compactMap { _ in takePacket(&state)?.dts }, [0, 40_000, 80_000])
        guard case .ended(.drained) = state.take(afterSending: nil, now: 0).take else { return XCTFail("drained") }
    }

    func testAStopOutranksAReconnectRequest() {
        var state = state()
        _ = state.requestReconnect()
        XCTAssertEqual(state.requestedEnd.map { "\($0)" }, "reconnectRequested")
        _ = state.stop()
        XCTAssertEqual(state.requestedEnd.map { "\($0)" }, "stopped")
    }

    func testSentPacketsMakeTheFiguresAndAnIdleOutputReadsZero() {
        var state = state()
        for i in 0..<25 {
            let sent = SentPacket(video(i), bytes: 10_000)
            state.record(sent, now: Int64(i + 1) * 40_000)
        }
        let figures = state.snapshot(now: 1_000_000)
        XCTAssertEqual(figures.videoFramesSent, 25)
        XCTAssertEqual(figures.bytesSent, 250_000)
        XCTAssertEqual(figures.bitrate, 2_000_000)
        XCTAssertEqual(figures.fps, 25, accuracy: 0.01)
        XCTAssertEqual(state.snapshot(now: 3_100_000).bitrate, 0, "nothing sent for over 2 s")
    }

    private func machine(attempts: Int) -> ReconnectStateMachine {
        ReconnectStateMachine(policy: ReconnectPolicy(maxAttempts: attempts, interval: .milliseconds(100)),
                              stale: .init(grace: .seconds(1), initialInterval: .milliseconds(250), maxInterval: .seconds(1)),
                              seed: 1)
    }

    private func resume(fast: Bool) -> PushOutput.ResumeState {
        PushOutput.ResumeState(info: StreamInfo(video: nil, audio: nil, duration: 0),
                                history: ResendHistory(limits: .init(fallbackWindow: 1 << 40), hasVideo: true))
    }

    func testTheFirstConnectEitherGivesUpOrRetriesAsConfigured() {
        var state = state()
        state.beginFirstEpisode(machine(attempts: 2), resume(fast: false))
        XCTAssertTrue(state.attemptStarts())
        let refused = LivePushError(.connectFailed, "refused")
        let once = state.attemptFailed(refused, retriesFirstConnect: false, now: 0)
        XCTAssertEqual(once?.decision, .giveUp(refused))
        XCTAssertEqual(once?.isFirst, true)
        let retried = state.attemptFailed(refused, retriesFirstConnect: true, now: 0)
        guard case .retry(attempt: 1, _)? = retried?.decision else { return XCTFail("\(String(describing: retried))") }
        state.firstConnectGaveUp()
        XCTAssertTrue(state.stopRequested)
        XCTAssertNil(state.episode)
    }

    func testARequestWhileConnectingRunsTheWaitingAttemptOrRestartsAGivenUpEpisode() {
        var state = state()
        XCTAssertNil(state.resumeEpisode(reconnect: true), "publishing: the pump ends on the request")
        state.beginFirstEpisode(machine(attempts: 1), resume(fast: false))
        XCTAssertTrue(state.attemptStarts())
        XCTAssertEqual(state.resumeEpisode(reconnect: true), .wait, "the running attempt looks when it ends")
        let workers = ConnectionWorkers(maximumThreads: 1, name: "livepush.test")
        let ticket = workers.run(after: .seconds(3600)) {}
        defer { workers.cancel(ticket) }
        state.attemptScheduled(ticket)
        XCTAssertEqual(state.resumeEpisode(reconnect: true), .runNow(ticket))
        XCTAssertTrue(state.attemptStarts())
        XCTAssertFalse(state.reconnectGaveUp(), "no stop asked for")
        XCTAssertEqual(state.resumeEpisode(reconnect: true), .restart(announcesReconnect: true))
        XCTAssertFalse(state.reconnectGaveUp())
        _ = state.stop()
        XCTAssertEqual(state.resumeEpisode(reconnect: false), .restart(announcesReconnect: false))
        XCTAssertFalse(state.attemptStarts(), "the restarted episode finds the stop")
        state.finishAfterStop()
        XCTAssertNil(state.episode)
    }

    func testAFastReconnectSendsAgainWhatTheServerHadNotAcknowledged() {
        var state = state(fast: true)
        state.beginFirstEpisode(machine(attempts: 3), resume(fast: true))
        XCTAssertTrue(state.attemptStarts())
        XCTAssertNotNil(state.attemptPublished())
        XCTAssertTrue(state.room.isConnected)
        // Sent frames 0-29 (never acknowledged); 30-39 still queued.
        var resume = resume(fast: true)
        for i in 0..<30 { resume.history.record(video(i), end: Int64(i + 1) * 1000) }
        resume.lastSentDTS = video(29).dts
        for i in 30..<40 { _ = state.push(video(i), now: 0) }
        let lost = LivePushError(.connectionLost, "reset")
        guard case .retry(attempt: 1, _) = state.beginReconnecting(after: lost, machine: machine(attempts: 3),
                                                                    resume: resume, frameStep: 40_000) else {
            return XCTFail("a lost connection is retried")
        }
        XCTAssertFalse(state.room.isConnected)
        XCTAssertEqual(state.snapshot(now: 0).queuedPackets, 40, "the unacknowledged frames went back in front")
        XCTAssertEqual(takePacket(&state)?.dts, 0)
        // What is sent again follows the last timestamp sent by one frame.
        XCTAssertEqual(state.episode?.resume.shift, video(29).dts + 40_000)
    }

    func testARealTimeReconnectStartsAtTheQueuedKeyframe() {
        var state = state()
        state.beginFirstEpisode(machine(attempts: 3), resume(fast: false))
        _ = state.attemptStarts()
        _ = state.attemptPublished()
        for i in 20..<30 { _ = state.push(video(i), now: 0) }
        _ = state.beginReconnecting(after: nil, machine: machine(attempts: 3), resume: resume(fast: false), frameStep: 40_000)
        XCTAssertEqual(takePacket(&state)?.dts, video(25).dts)
    }
}
