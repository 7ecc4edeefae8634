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
