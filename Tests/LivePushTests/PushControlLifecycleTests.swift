import XCTest
@testable import LivePush

/// A push's state as ``PushControl`` decides it, from the app's calls, the outputs' signals
/// and the source's failure, with the events each move emits in order; no sockets.
final class PushControlLifecycleTests: XCTestCase {
    private let lost = LivePushError(.connectionLost, "peer closed")

    private func names(_ actions: PushControl.Actions) -> [String] { PushControlTests.eventNames(actions) }

    private func started(_ kinds: [PushURL.Scheme] = [.rtmp], slate: Bool = false) throws -> PushControl {
        var c = PushControlTests.control(kinds, slate: slate)
        XCTAssertEqual(c.state, .idle)
        XCTAssertEqual(names(try c.apply(.start)), ["state connecting"])
        return c
    }

    func testStartPublishPauseLoseReconnectResumeStopFinish() throws {
        var c = try started()
        let published = try c.apply(.output(id: 0, .published(url: "rtmp://h/live/k")))
        XCTAssertEqual(published.events, [.stateChanged(.pushing), .pushStarted(url: "rtmp://h/live/k")])
        XCTAssertEqual(names(try c.apply(.output(id: 0, .firstFrameSent))), ["firstFramePushed"])

        let pause = try c.apply(.pause)
        XCTAssertEqual(pause.events, [.stateChanged(.paused), .paused])
        guard case .pause = pause.producer.first else { return XCTFail("\(pause.producer)") }

        // A connection lost while paused is restored without leaving `paused`.
        let lostWhilePaused = try c.apply(.output(id: 0, .connectionLost(lost)))
        XCTAssertEqual(lostWhilePaused.events, [.stateChanged(.paused), .connectionLost(lost)])
        XCTAssertEqual(names(try c.apply(.output(id: 0, .reconnecting(attempt: 1)))), ["reconnectStarted"])
        let back = try c.apply(.output(id: 0, .reconnected(url: "rtmp://h/live/k")))
        XCTAssertEqual(back.events, [.stateChanged(.paused), .reconnectSucceeded])
        XCTAssertEqual(c.state, .paused)

        let resume = try c.apply(.resume)
        XCTAssertEqual(resume.events, [.stateChanged(.pushing), .resumed])
        guard case .resume = resume.producer.first else { return XCTFail("\(resume.producer)") }

        let stop = try c.apply(.stop)
        XCTAssertEqual(stop.events, [.stateChanged(.stopping)])
        XCTAssertTrue(stop.stopsProducer)
        XCTAssertEqual(stop.outputs.map(\.order), [.stop])
        XCTAssertEqual(try c.apply(.stop).events, [], "a second stop while stopping is no error and says nothing")

        let finished = try c.apply(.output(id: 0, .finished))
        XCTAssertTrue(finished.endsPush)
        XCTAssertEqual(finished.events, [], "the final state waits for the final figures")
        XCTAssertEqual(c.state, .stopping)
        var stats = PushStats()
        stats.loopsCompleted = 3
        let close = try c.apply(.close(finalStats: stats))
        XCTAssertEqual(close.events, [.stateChanged(.stopped), .stopped(stats)])
        XCTAssertEqual(c.state, .stopped)
        XCTAssertEqual(try c.apply(.close(finalStats: stats)).events, [], "closed once")
        XCTAssertThrowsError(try c.apply(.pause)) { error in
            XCTAssertEqual((error as? LivePushError)?.detail, "cannot pause while stopped")
        }
    }

    func testTheSlateIsWhatAPauseShows() throws {
        var c = try started(slate: true)
        _ = try c.apply(.output(id: 0, .published(url: "u")))
        guard case .showSlate = try c.apply(.pause).producer.first else { return XCTFail() }
        guard case .leaveSlate = try c.apply(.resume).producer.first else { return XCTFail() }
    }

    func testTheMediaEndingFinishesThePushWithoutAStop() throws {
        var c = try started()
        _ = try c.apply(.output(id: 0, .published(url: "u")))
        XCTAssertTrue(try c.apply(.output(id: 0, .finished)).endsPush)
        XCTAssertEqual(names(try c.apply(.close(finalStats: PushStats()))), ["state stopped", "stopped"])
    }

    func testTheSourceFailingEndsThePushFailedAndNothingIsReportedAfter() throws {
        var c = try started([.rtmp, .rtmp])
        _ = try c.apply(.output(id: 0, .published(url: "u")))
        let broken = LivePushError(.encoderUnavailable, "bad packet")
        let failed = try c.apply(.sourceFailed(broken))
        XCTAssertEqual(failed.events, [.sdkError(broken)])
        XCTAssertTrue(failed.stopsProducer)
        XCTAssertTrue(failed.endsPush)
        XCTAssertEqual(failed.outputs.map(\.id), [0, 1], "every output unpublishes")
        // The outputs winding down report nothing more, and end nothing again.
        XCTAssertEqual(try c.apply(.output(id: 1, .connectionLost(lost))).events, [])
        let outputsDone = [try c.apply(.output(id: 0, .finished)), try c.apply(.output(id: 1, .finished))]
        XCTAssertEqual(outputsDone.map(\.endsPush), [false, false])
        XCTAssertEqual(outputsDone.flatMap(\.events), [])
        XCTAssertFalse(try c.apply(.sourceFailed(broken)).endsPush)
        XCTAssertEqual(names(try c.apply(.close(finalStats: PushStats()))), ["state failed", "stopped"])
        XCTAssertEqual(c.state, .failed(broken))

        var memory = try started()
        let exhausted = LivePushError(.outOfMemory)
        XCTAssertEqual(try memory.apply(.sourceFailed(exhausted)).events, [.systemError(exhausted)])
    }

    func testAFailureWhileStoppingEndsStopped() throws {
        var c = try started()
        _ = try c.apply(.stop)
        _ = try c.apply(.sourceFailed(LivePushError(.encoderUnavailable)))
        _ = try c.apply(.close(finalStats: PushStats()))
        XCTAssertEqual(c.state, .stopped)
    }

    func testAStopDuringConnectingWinsOverThePublishThatFollows() throws {
        var c = try started()
        _ = try c.apply(.stop)
        XCTAssertEqual(try c.apply(.output(id: 0, .published(url: "u"))).events, [])
        XCTAssertEqual(try c.apply(.output(id: 0, .connectionLost(lost))).events, [], "no loss reported while stopping")
        XCTAssertEqual(c.state, .stopping)
    }

    func testLossesAndGivingUp() throws {
        var c = try started()
        _ = try c.apply(.output(id: 0, .published(url: "u")))
        let timeout = LivePushError(.sendDataTimeout)
        XCTAssertEqual(try c.apply(.output(id: 0, .connectionLost(timeout))).events,
                       [.stateChanged(.reconnecting), .sendDataTimeout, .connectionLost(timeout)])
        XCTAssertThrowsError(try c.apply(.pause)) { error in
            XCTAssertEqual((error as? LivePushError)?.detail, "cannot pause while reconnecting")
        }
        let cause = LivePushError(.connectionRefused, "refused")
        XCTAssertEqual(try c.apply(.output(id: 0, .reconnectFailed(cause))).events,
                       [.reconnectFailed(LivePushError(.reconnectFailed, cause.message)), .sdkError(cause)])
        XCTAssertEqual(try c.apply(.reconnect).outputs.map(\.order), [.reconnect], "the app may still reconnect")
        XCTAssertEqual(try c.apply(.output(id: 0, .reconnectRequested)).events, [.stateChanged(.reconnecting)])
        XCTAssertEqual(try c.apply(.output(id: 0, .reconnected(url: "u"))).events, [.stateChanged(.pushing), .reconnectSucceeded])
    }

    func testIllegalCallsThrowInvalidStateAndChangeNothing() throws {
        var idle = PushControlTests.control()
        let refusals: [(PushControl, EngineMessage, String)] = try [
            (idle, .pause, "cannot pause while idle"), (idle, .resume, "cannot resume while idle"),
            (idle, .stop, "cannot stop while idle"), (idle, .reconnect, "cannot reconnect while idle"),
            (started(), .pause, "cannot pause while connecting"), (started(), .resume, "cannot resume while connecting"),
            (started(), .reconnect, "cannot reconnect while connecting"), (started(), .start, "cannot start while connecting"),
            (pushing(), .resume, "cannot resume while pushing"), (pushing(), .start, "cannot start while pushing"),
            (paused(), .pause, "cannot pause while paused"),
        ]
        for (control, message, text) in refusals {
            var c = control
            let before = c.state
            XCTAssertThrowsError(try c.apply(message), text) { error in
                XCTAssertEqual((error as? LivePushError)?.code, .invalidState)
                XCTAssertEqual((error as? LivePushError)?.detail, text)
            }
            XCTAssertEqual(c.state, before)
            XCTAssertFalse(c.stopRequested)
        }
        // Between pushes the pusher refuses with the same words.
        XCTAssertEqual(PushControl.refusal(of: .pause, while: .idle).detail, "cannot pause while idle")
        XCTAssertEqual(PushControl.refusal(of: .reconnect, while: .stopped).detail, "cannot reconnect while stopped")
        XCTAssertEqual(try idle.apply(.start).events, [.stateChanged(.connecting)])
    }

    /// Interactive mode (a WHIP output) reports its connection status after each change of the
    /// push; the last one, after the push ended, follows `stopped`.
    func testInteractiveModeReportsItsConnectionStatus() throws {
        var c = try started([.https])
        XCTAssertEqual(names(try c.apply(.output(id: 0, .published(url: "u")))),
                       ["state pushing", "pushStarted", "connectionStatusChanged"])
        guard case .connectionStatusChanged(.connecting) = try c.apply(.output(id: 0, .reconnectRequested)).events.last
        else { return XCTFail() }
        _ = try c.apply(.stop)
        let finished = try c.apply(.output(id: 0, .finished))
        XCTAssertEqual(finished.events, [])
        let close = try c.apply(.close(finalStats: PushStats()))
        XCTAssertEqual(names(close), ["state stopped", "stopped"])
        XCTAssertEqual(close.afterStreamsEnd, [.connectionStatusChanged(.disconnected)])
    }

    private func pushing() throws -> PushControl {
        var c = try started()
        _ = try c.apply(.output(id: 0, .published(url: "u")))
        return c
    }

    private func paused() throws -> PushControl {
        var c = try pushing()
        _ = try c.apply(.pause)
        return c
    }
}
