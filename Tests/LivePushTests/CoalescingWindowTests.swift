import XCTest
@testable import LivePush

final class CoalescingWindowTests: XCTestCase {
    func testAJobThatFallsDueOpensAWindowForTheJobsDueWithinIt() {
        var window = CoalescingWindow(length: 5_000)
        XCTAssertFalse(window.admits(due: 20_000, now: 10_000), "nothing is open yet")
        XCTAssertEqual(window.sleep(forJobDue: 20_000, now: 10_000), 10_000)
        XCTAssertTrue(window.admits(due: 20_000, now: 20_100))
        XCTAssertTrue(window.admits(due: 22_000, now: 20_200))
        XCTAssertTrue(window.admits(due: 25_100, now: 20_300))
        XCTAssertNil(window.sleep(forJobDue: 25_100, now: 20_300))
        XCTAssertFalse(window.admits(due: 25_200, now: 20_400), "past the window")
        XCTAssertEqual(window.sleep(forJobDue: 25_200, now: 20_400), 4_800)
    }

    func testALateJobMovesTheWindowOn() {
        var window = CoalescingWindow(length: 5_000)
        XCTAssertTrue(window.admits(due: 20_000, now: 20_000))
        XCTAssertTrue(window.admits(due: 24_000, now: 40_000))  // late: due, and opens a new window
        XCTAssertTrue(window.admits(due: 44_000, now: 40_100))
    }

    func testWorkIsPassedOnOncePerWindowWhenTheThreadNeverSleeps() {
        var window = CoalescingWindow(length: 5_000)
        XCTAssertFalse(window.passesOn(now: 0), "nothing ran")
        window.ran(at: 1_000)
        window.ran(at: 3_000)
        XCTAssertFalse(window.passesOn(now: 5_900))
        XCTAssertTrue(window.passesOn(now: 6_000))
        window.passedOn()
        XCTAssertFalse(window.passesOn(now: 20_000))
        window.ran(at: 20_000)
        XCTAssertFalse(window.passesOn(now: 24_000))
    }
}
