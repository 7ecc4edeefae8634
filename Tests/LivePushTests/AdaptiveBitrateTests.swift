@testable import LivePush
import XCTest

final class AdaptiveBitrateTests: XCTestCase {
    private let second: Int64 = 1_000_000

    func testStepsDownWhilePoorAndStopsAtTheMinimum() {
        var control = AdaptiveBitrate(target: 800_000, minimum: 200_000, initial: 800_000)
        XCTAssertEqual(control.networkPoor(now: 0), 560_000)
        XCTAssertNil(control.tick(now: second), "steps are at least 2 s apart")
        XCTAssertEqual(control.tick(now: 2 * second), 392_000)
        XCTAssertEqual(control.tick(now: 4 * second), 274_000)
        XCTAssertEqual(control.tick(now: 6 * second), 200_000, "clamped to the minimum")
        XCTAssertNil(control.tick(now: 8 * second), "nothing below the minimum")
        XCTAssertEqual(control.current, 200_000)
    }

    func testStepsBackUpAfterRecoveryToTheTarget() {
        var control = AdaptiveBitrate(target: 800_000, minimum: 200_000, initial: 200_000)
        XCTAssertEqual(control.networkRecovered(now: 0), 250_000)
        var now: Int64 = 0
        var rates: [Int] = []
        while let next = control.tick(now: now + 2 * second) {
            now += 2 * second
            rates.append(next)
        }
        XCTAssertEqual(rates, [313_000, 391_000, 489_000, 611_000, 764_000, 800_000])
        XCTAssertNil(control.tick(now: now + 10 * second), "stays at the target")
    }

    func testAPoorNetworkRightAfterAnUpStepStepsDownAtOnce() {
        var control = AdaptiveBitrate(target: 800_000, minimum: 200_000, initial: 400_000)
        XCTAssertEqual(control.networkRecovered(now: 0), 500_000)
        XCTAssertEqual(control.networkPoor(now: 100_000), 350_000, "relief does not wait for the hold")
        XCTAssertNil(control.networkRecovered(now: 200_000), "but probing up does")
    }

    func testInitialIsClampedBetweenMinimumAndTarget() {
        XCTAssertEqual(AdaptiveBitrate(target: 800_000, minimum: 200_000, initial: 5_000_000).current, 800_000)
        XCTAssertEqual(AdaptiveBitrate(target: 800_000, minimum: 200_000, initial: 10_000).current, 200_000)
        XCTAssertEqual(AdaptiveBitrate(target: 800_000, minimum: 900_000, initial: 10_000).current, 800_000)
    }
}

final class PerformanceMonitorTests: XCTestCase {
    /// One second of media at 25 fps that took `busy` microseconds per frame.
    private func second(_ monitor: inout PerformanceMonitor, perFrame busy: Int64) -> Bool {
        var started = false
        for _ in 0..<25 where monitor.record(frames: 1, busy: busy) { started = true }
        return started
    }

    func testWarnsOnceAfterThreeSlowSeconds() {
        var monitor = PerformanceMonitor(targetFPS: 25)
        XCTAssertFalse(second(&monitor, perFrame: 70_000))
        XCTAssertFalse(second(&monitor, perFrame: 70_000))
        XCTAssertTrue(second(&monitor, perFrame: 70_000), "third slow second starts the episode")
        XCTAssertEqual(monitor.capacityFPS, 1_000_000 / 70_000, accuracy: 0.1)
        XCTAssertFalse(second(&monitor, perFrame: 70_000), "once per episode")
        XCTAssertTrue(monitor.inEpisode)
    }

    func testEpisodeEndsAfterThreeFastSecondsAndCanRecur() {
        var monitor = PerformanceMonitor(targetFPS: 25)
        for _ in 0..<3 { _ = second(&monitor, perFrame: 60_000) }
        XCTAssertTrue(monitor.inEpisode)
        for _ in 0..<3 { _ = second(&monitor, perFrame: 10_000) }
        XCTAssertFalse(monitor.inEpisode)
        XCTAssertFalse(second(&monitor, perFrame: 60_000))
        XCTAssertFalse(second(&monitor, perFrame: 60_000))
        XCTAssertTrue(second(&monitor, perFrame: 60_000), "a new episode is reported again")
    }

    func testJustAboveTheThresholdNeverWarns() {
        var monitor = PerformanceMonitor(targetFPS: 25)
        // 55 ms a frame is 18.2 fps, above 70% of 25 (17.5).
        for _ in 0..<10 { XCTAssertFalse(second(&monitor, perFrame: 55_000)) }
    }

    func testOneSlowSecondAmongFastOnesIsNoEpisode() {
        var monitor = PerformanceMonitor(targetFPS: 25)
        for i in 0..<12 { XCTAssertFalse(second(&monitor, perFrame: i % 3 == 0 ? 90_000 : 5_000)) }
    }
}
