import XCTest
@testable import LivePush

final class PacingGateTests: XCTestCase {
    func testAPacketDueLaterWaitsAndOnesWithinTheSlackGoWithIt() {
        var gate = PacingGate(earlyRelease: 0, slack: 20_000)
        XCTAssertEqual(gate.wait(forPacketDue: 100_000, now: 60_000), 40_000)
        XCTAssertNil(gate.wait(forPacketDue: 100_000, now: 100_500))  // woken
        XCTAssertNil(gate.wait(forPacketDue: 115_000, now: 100_600))  // same batch: early is fine
        XCTAssertEqual(gate.wait(forPacketDue: 125_000, now: 100_700), 24_300)  // past the slack
        XCTAssertEqual(gate.lateness.worst, 500)
        XCTAssertEqual(gate.lateness.packetsLaterThan20ms, 0)
    }

    func testLatenessIsCountedByThreshold() {
        var gate = PacingGate(earlyRelease: 0, slack: 20_000)
        XCTAssertNil(gate.wait(forPacketDue: 0, now: 30_000))
        XCTAssertNil(gate.wait(forPacketDue: 40_000, now: 100_000))
        XCTAssertNil(gate.wait(forPacketDue: 80_000, now: 200_000))
        XCTAssertEqual(gate.lateness.packetsLaterThan20ms, 3)
        XCTAssertEqual(gate.lateness.packetsLaterThan50ms, 2)
        XCTAssertEqual(gate.lateness.packetsLaterThan100ms, 1)
        XCTAssertEqual(gate.lateness.worst, 120_000)
    }

    /// A loop of a file with B-frames: the new pass's first pictures decode 50 ms before the
    /// sound already sent ends. They go out at once, and are not late: nothing could have sent
    /// them earlier.
    func testAPacketIsNeverDueBeforeTheOneReleasedBeforeIt() {
        var gate = PacingGate(earlyRelease: 0, slack: 20_000)
        XCTAssertEqual(gate.wait(forPacketDue: 20_072_000, now: 20_050_000), 22_000)
        XCTAssertNil(gate.wait(forPacketDue: 20_072_000, now: 20_072_300))  // the old pass's last sound
        XCTAssertNil(gate.wait(forPacketDue: 20_023_000, now: 20_072_600))  // the new pass's first picture
        XCTAssertEqual(gate.lateness.worst, 600)
        XCTAssertEqual(gate.lateness.packetsLaterThan20ms, 0)
        // It does not hold back what follows: the next batch starts where it is due.
        XCTAssertEqual(gate.wait(forPacketDue: 20_100_000, now: 20_073_000), 27_000)
    }

    func testABatchMayStartWithinTheEarlyReleaseWindow() {
        var gate = PacingGate(earlyRelease: 5_000, slack: 20_000)
        XCTAssertNil(gate.wait(forPacketDue: 104_000, now: 100_000))  // run early by the scheduler's window
        XCTAssertNil(gate.wait(forPacketDue: 120_000, now: 100_100))  // within the batch
        XCTAssertEqual(gate.wait(forPacketDue: 140_000, now: 100_200), 39_800)
        XCTAssertEqual(gate.lateness.worst, 0, "early is not late")
    }

    func testTheDefaultBatchIsATenthOfASecond() {
        var gate = PacingGate(earlyRelease: 0)
        XCTAssertEqual(gate.wait(forPacketDue: 100_000, now: 60_000), 40_000)
        XCTAssertNil(gate.wait(forPacketDue: 100_000, now: 100_000))
        XCTAssertNil(gate.wait(forPacketDue: 199_000, now: 100_100), "within the batch")
        XCTAssertEqual(gate.wait(forPacketDue: 201_000, now: 100_200), 100_800)
    }

    func testANewBatchWaitsEvenWithinTheOldSlack() {
        var gate = PacingGate(earlyRelease: 0, slack: 20_000)
        XCTAssertNil(gate.wait(forPacketDue: 0, now: 0))
        gate.startNewBatch()  // a pause moved what is due
        XCTAssertEqual(gate.wait(forPacketDue: 10_000, now: 1_000), 9_000)
    }
}
