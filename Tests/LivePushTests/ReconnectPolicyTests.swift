import XCTest
@testable import LivePush

final class ReconnectPolicyTests: XCTestCase {
    func testReferenceDefaultsAreFiveTriesOneSecondApart() {
        let policy = ReconnectPolicy()
        XCTAssertEqual((1...5).map { policy.delay(beforeAttempt: $0) }, Array(repeating: .milliseconds(1000), count: 5))
        XCTAssertNil(policy.delay(beforeAttempt: 6))
        XCTAssertNil(policy.delay(beforeAttempt: 0))
    }

    func testBackoffGrowsAndIsCapped() {
        let policy = ReconnectPolicy(maxAttempts: 6, interval: .seconds(2), backoff: 1.5, maxInterval: .seconds(6))
        XCTAssertEqual(policy.delay(beforeAttempt: 1), .seconds(2))
        XCTAssertEqual(policy.delay(beforeAttempt: 2), .seconds(3))
        XCTAssertEqual(policy.delay(beforeAttempt: 3), .milliseconds(4500))
        XCTAssertEqual(policy.delay(beforeAttempt: 4), .seconds(6))
        XCTAssertEqual(policy.delay(beforeAttempt: 6), .seconds(6))
    }

    func testRangeIsClampedAndZeroDisablesReconnect() {
        XCTAssertEqual(ReconnectPolicy(maxAttempts: 500).maxAttempts, 100)
        XCTAssertNil(ReconnectPolicy(maxAttempts: 0).delay(beforeAttempt: 1))
    }

    func testForeverNeverRunsOutAndStaysCapped() {
        let policy = ReconnectPolicy(maxAttempts: ReconnectPolicy.forever, interval: .seconds(1), backoff: 2, maxInterval: .seconds(30))
        XCTAssertEqual((1...6).map { policy.delay(beforeAttempt: $0) },
                       [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30)])
        XCTAssertEqual(policy.delay(beforeAttempt: 1_000_000_000), .seconds(30))
        XCTAssertEqual(ReconnectPolicy(maxAttempts: ReconnectPolicy.forever).delay(beforeAttempt: Int.max - 1), .seconds(1),
                       "a constant interval is not computed attempt by attempt")
    }

    func testJitterShortensEachWaitByUpToItsShareAndIsReplayable() {
        let policy = ReconnectPolicy(maxAttempts: ReconnectPolicy.forever, interval: .seconds(1), backoff: 2,
                                     maxInterval: .seconds(30), jitter: 0.25)
        let stale = ReconnectStateMachine.StaleSessionPolicy(grace: .seconds(1), initialInterval: .seconds(1), maxInterval: .seconds(1))
        func waits(seed: UInt64) -> [Duration] {
            var m = ReconnectStateMachine(policy: policy, stale: stale, seed: seed)
            var decisions = [m.begin(after: LivePushError(.connectionRefused))]
            for _ in 0..<40 { decisions.append(m.attemptFailed(LivePushError(.connectionRefused), now: 0)) }
            return decisions.map { decision in
                guard case .retry(_, let delay) = decision else { XCTFail("\(decision)"); return .zero }
                return delay
            }
        }
        let first = waits(seed: 7)
        XCTAssertEqual(first, waits(seed: 7))
        XCTAssertNotEqual(first, waits(seed: 8))
        for (index, wait) in first.enumerated() {
            let full = policy.delay(beforeAttempt: index + 1)!
            XCTAssertLessThanOrEqual(wait, full)
            XCTAssertGreaterThanOrEqual(wait, full * 0.75)
        }
        XCTAssertGreaterThan(Set(first.suffix(30)).count, 20, "capped waits still differ, so channels do not come back in step")
    }

    func testWhatIsRetryable() {
        XCTAssertTrue(ReconnectPolicy.isRetryable(LivePushError(.connectionRefused)))
        XCTAssertTrue(ReconnectPolicy.isRetryable(LivePushError(.sendDataTimeout)))
        XCTAssertTrue(ReconnectPolicy.isRetryable(LivePushError(.publishRejected, "NetStream.Publish.BadName: Already publishing")))
        XCTAssertFalse(ReconnectPolicy.isRetryable(LivePushError(.publishRejected, "NetStream.Publish.BadName: Bad name")))
        XCTAssertFalse(ReconnectPolicy.isRetryable(LivePushError(.authExpired)))
        XCTAssertFalse(ReconnectPolicy.isRetryable(LivePushError(.tlsVerificationFailed, "h:443: certificate expired")))
    }
}

final class CongestionDetectorTests: XCTestCase {
    func testPoorAndRecoveredWithHysteresis() {
        var d = CongestionDetector(poorBacklog: 1_000_000, recoveredBacklog: 300_000, hold: 500_000)
        XCTAssertNil(d.update(backlog: 1_200_000, now: 0))
        XCTAssertNil(d.update(backlog: 1_200_000, now: 400_000), "not held long enough")
        XCTAssertEqual(d.update(backlog: 1_100_000, now: 600_000), .poor)
        XCTAssertNil(d.update(backlog: 1_500_000, now: 2_000_000), "reported once")
        XCTAssertNil(d.update(backlog: 500_000, now: 2_100_000), "between the marks: still poor")
        XCTAssertNil(d.update(backlog: 200_000, now: 2_200_000))
        XCTAssertNil(d.update(backlog: 600_000, now: 2_600_000), "bounced back up: the hold restarts")
        XCTAssertNil(d.update(backlog: 100_000, now: 2_700_000))
        XCTAssertEqual(d.update(backlog: 100_000, now: 3_200_000), .recovered)
        XCTAssertFalse(d.isPoor)
    }

    func testShortSpikesAreIgnored() {
        var d = CongestionDetector(poorBacklog: 1_000_000, recoveredBacklog: 300_000, hold: 500_000)
        for t in stride(from: Int64(0), to: 5_000_000, by: 300_000) {
            XCTAssertNil(d.update(backlog: t % 600_000 == 0 ? 2_000_000 : 0, now: t))
        }
    }
}
