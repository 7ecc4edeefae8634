import XCTest
@testable import LivePush

final class ReconnectStateMachineTests: XCTestCase {
    private let held = LivePushError(.publishRejected, "NetStream.Publish.BadName: Already publishing")
    private let refused = LivePushError(.connectionRefused, "127.0.0.1:1935")

    private func machine(retries: Int = 2, grace: Duration = .seconds(10)) -> ReconnectStateMachine {
        ReconnectStateMachine(
            policy: ReconnectPolicy(maxAttempts: retries, interval: .milliseconds(500)),
            stale: .init(grace: grace, initialInterval: .milliseconds(500), maxInterval: .seconds(2)))
    }

    private static func seconds(_ s: Double) -> Int64 { Int64(s * 1_000_000) }

    func testOrdinaryFailuresSpendTheRetryCount() {
        var m = machine(retries: 2)
        XCTAssertEqual(m.begin(after: LivePushError(.connectionLost)), .retry(attempt: 1, delay: .milliseconds(500)))
        XCTAssertEqual(m.attemptFailed(refused, now: 0), .retry(attempt: 2, delay: .milliseconds(500)))
        XCTAssertEqual(m.attemptFailed(refused, now: 0), .giveUp(refused))
    }

    func testStaleSessionRejectionsSpendTimeNotRetries() {
        var m = machine(retries: 1, grace: .seconds(10))
        XCTAssertEqual(m.begin(after: LivePushError(.connectionLost)), .retry(attempt: 1, delay: .milliseconds(500)))
        // The interval grows 1.5 times per rejection, capped at 2 s; the attempt number counts them.
        let delays = (0..<6).map { i -> ReconnectStateMachine.Decision in m.attemptFailed(held, now: Self.seconds(Double(i))) }
        XCTAssertEqual(delays, [
            .awaitStaleSession(attempt: 1, waited: .zero, delay: .milliseconds(500)),
            .awaitStaleSession(attempt: 2, waited: .seconds(1), delay: .milliseconds(750)),
            .awaitStaleSession(attempt: 3, waited: .seconds(2), delay: .milliseconds(1125)),
            .awaitStaleSession(attempt: 4, waited: .seconds(3), delay: .milliseconds(1687) + .microseconds(500)),
            .awaitStaleSession(attempt: 5, waited: .seconds(4), delay: .seconds(2)),
            .awaitStaleSession(attempt: 6, waited: .seconds(5), delay: .seconds(2)),
        ])
    }

    func testTheLastWaitEndsWithTheGraceThenItGivesUp() {
        var m = machine(retries: 5, grace: .seconds(3))
        _ = m.begin(after: LivePushError(.connectionLost))
        _ = m.attemptFailed(held, now: 0)
        XCTAssertEqual(m.attemptFailed(held, now: Self.seconds(2.5)),
                       .awaitStaleSession(attempt: 2, waited: .milliseconds(2500), delay: .milliseconds(500)))
        guard case .giveUp(let error) = m.attemptFailed(held, now: Self.seconds(3)) else { return XCTFail("expected giveUp") }
        XCTAssertEqual(error.code, .publishRejected)
        XCTAssertTrue(error.message.contains("still held the previous publisher after 3.0 s"), error.message)
        XCTAssertTrue(error.message.contains("Already publishing"), error.message)
    }

    func testMixedFailuresKeepBothBudgets() {
        var m = machine(retries: 2, grace: .seconds(60))
        _ = m.begin(after: LivePushError(.connectionLost))                 // retry 1
        _ = m.attemptFailed(held, now: 0)                                  // stale 1
        XCTAssertEqual(m.attemptFailed(refused, now: Self.seconds(1)), .retry(attempt: 2, delay: .milliseconds(500)))
        XCTAssertEqual(m.attemptFailed(held, now: Self.seconds(2)),
                       .awaitStaleSession(attempt: 2, waited: .seconds(2), delay: .milliseconds(750)))
        XCTAssertEqual(m.attemptFailed(refused, now: Self.seconds(3)), .giveUp(refused))
    }

    func testARequestedReconnectIsImmediateAndStartsAFreshEpisode() {
        var m = machine(retries: 1, grace: .seconds(1))
        _ = m.begin(after: LivePushError(.connectionLost))
        _ = m.attemptFailed(held, now: 0)
        _ = m.attemptFailed(held, now: Self.seconds(1))  // grace used up
        XCTAssertEqual(m.begin(after: nil), .retry(attempt: 1, delay: .zero))
        XCTAssertEqual(m.attemptFailed(held, now: Self.seconds(5)),
                       .awaitStaleSession(attempt: 1, waited: .zero, delay: .milliseconds(500)))
    }

    func testUncurableErrorsGiveUpAtOnce() {
        var m = machine()
        let expired = LivePushError(.authExpired)
        _ = m.begin(after: LivePushError(.connectionLost))
        XCTAssertEqual(m.attemptFailed(expired, now: 0), .giveUp(expired))
    }

    func testWhatCountsAsAStaleSession() {
        let yes = ["NetStream.Publish.BadName: Already publishing", "NetStream.Publish.BadName: Stream already published",
                   "NetStream.Publish.BadName: stream name is already in use", "NetStream.Publish.Denied: stream already exists"]
        for detail in yes {
            XCTAssertTrue(ReconnectStateMachine.isStaleSession(LivePushError(.publishRejected, detail)), detail)
        }
        XCTAssertFalse(ReconnectStateMachine.isStaleSession(LivePushError(.publishRejected, "NetStream.Publish.BadName: Bad name")))
        XCTAssertFalse(ReconnectStateMachine.isStaleSession(LivePushError(.connectRejected, "already publishing")))
        XCTAssertFalse(ReconnectStateMachine.isStaleSession(LivePushError(.publishRejected)))
    }
}
