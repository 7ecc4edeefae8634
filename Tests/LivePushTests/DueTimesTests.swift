import XCTest
@testable import LivePush

final class DueTimesTests: XCTestCase {
    private func takeAll(_ times: inout DueTimes<Int>, through time: Int64) -> [Int] {
        var keys: [Int] = []
        times.takeDue(through: time, into: &keys)
        return keys
    }

    func testKeysComeOutEarliestFirstAndOnlyWhenDue() {
        var times = DueTimes<Int>()
        XCTAssertNil(times.earliest)
        times.schedule(1, at: 300)
        times.schedule(2, at: 100)
        times.schedule(3, at: 200)
        XCTAssertEqual(times.earliest, 100)
        XCTAssertEqual(takeAll(&times, through: 99), [])
        XCTAssertEqual(takeAll(&times, through: 200), [2, 3])
        XCTAssertEqual(times.count, 1)
        XCTAssertNil(times.due(of: 2))
        XCTAssertEqual(times.earliest, 300)
    }

    /// A connection served at its turns moves its next read later every turn: it is in the heap
    /// once, never due at its old time.
    func testReschedulingMovesAKeyInsteadOfAddingOne() {
        var times = DueTimes<Int>()
        times.schedule(1, at: 100)
        times.schedule(2, at: 150)
        times.schedule(1, at: 400)
        XCTAssertEqual(times.count, 2)
        XCTAssertEqual(times.earliest, 150)
        XCTAssertEqual(takeAll(&times, through: 399), [2])
        times.schedule(1, at: 50)  // sooner again (a blocked write's retry)
        XCTAssertEqual(times.earliest, 50)
        XCTAssertEqual(takeAll(&times, through: 50), [1])
        XCTAssertTrue(times.isEmpty)
    }

    func testARemovedKeyIsNeverDue() {
        var times = DueTimes<Int>()
        for key in 0..<10 { times.schedule(key, at: Int64(key) * 10) }
        XCTAssertEqual(times.remove(0), 0)
        XCTAssertEqual(times.remove(5), 50)
        XCTAssertNil(times.remove(5))
        XCTAssertNil(times.remove(42))
        XCTAssertEqual(takeAll(&times, through: .max), [1, 2, 3, 4, 6, 7, 8, 9])
    }

    /// What a wake-up takes within its window: everything due up to the window's end, the rest
    /// stays for the next wake-up.
    func testAWakeUpTakesWhatFallsDueWithinItsWindow() {
        var times = DueTimes<Int>()
        times.schedule(1, at: 1_000)
        times.schedule(2, at: 3_000)
        times.schedule(3, at: 9_000)
        XCTAssertEqual(takeAll(&times, through: 1_000 + 5_000), [1, 2])
        XCTAssertEqual(times.earliest, 9_000)
    }

    /// Against a plain sorted reference, through many random schedules, moves and removals.
    func testAgreesWithASortedReference() {
        var generator = SystemRandomNumberGenerator()
        var times = DueTimes<Int>()
        var reference: [Int: Int64] = [:]
        for step in 0..<5_000 {
            let key = Int.random(in: 0..<200, using: &generator)
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<6:
                let due = Int64.random(in: 0..<10_000, using: &generator)
                times.schedule(key, at: due)
                reference[key] = due
            case 6..<8:
                XCTAssertEqual(times.remove(key), reference.removeValue(forKey: key))
            default:
                let time = Int64.random(in: 0..<3_000, using: &generator)
                let taken = takeAll(&times, through: time)
                let expected = reference.filter { $0.value <= time }
                XCTAssertEqual(Set(taken), Set(expected.keys), "step \(step)")
                XCTAssertEqual(taken.map { expected[$0]! }, expected.values.sorted(), "step \(step): not earliest first")
                for key in taken { reference[key] = nil }
            }
            XCTAssertEqual(times.count, reference.count)
            XCTAssertEqual(times.earliest, reference.values.min())
            XCTAssertEqual(times.due(of: key), reference[key])
        }
    }
}
