import XCTest
@testable import LivePush

/// The failover decisions, slot by slot: a late primary is filled, a silent one is lost after
/// the timeout, and it comes back only once it has delivered steadily for `returnAfter`.
final class FailoverStateMachineTests: XCTestCase {
    private func machine(backup: Bool = true) -> FailoverStateMachine {
        var options = LiveInputOptions()
        options.timeout = .seconds(2)
        options.returnAfter = .seconds(3)
        return FailoverStateMachine(options: options, hasBackup: backup)
    }

    private let s: Int64 = 1_000_000

    func testALatePrimaryIsFilledThenLostAfterTheTimeoutToTheBackup() {
        var m = machine()
        XCTAssertEqual(m.decide(now: 0, lastArrival: 0, steadySince: 0, hasFrame: true), .init(show: .primary))
        XCTAssertEqual(m.decide(now: s, lastArrival: 0, steadySince: 0, hasFrame: false), .init(show: .fill))
        XCTAssertEqual(m.decide(now: 2 * s - 1, lastArrival: 0, steadySince: nil, hasFrame: false), .init(show: .fill))
        let lost = m.decide(now: 2 * s, lastArrival: 0, steadySince: nil, hasFrame: false)
        XCTAssertEqual(lost.show, .backup)
        XCTAssertEqual(lost.events.map(\.name), ["inputLost", "switchedToBackup"])
        XCTAssertEqual(lost.events.first?.error?.code, .inputLost)
        XCTAssertEqual(m.onAir, .backup)
        XCTAssertEqual(m.switches, 1)
    }

    func testWithoutABackupTheSlateStandsIn() {
        var m = machine(backup: false)
        XCTAssertEqual(m.decide(now: 0, lastArrival: nil, steadySince: nil, hasFrame: false).show, .fill)
        let lost = m.decide(now: 5 * s, lastArrival: nil, steadySince: nil, hasFrame: false)
        XCTAssertEqual(lost.show, .slate, "a primary that never delivers is lost a timeout after the start")
        XCTAssertEqual(lost.events.map(\.name), ["inputLost", "switchedToSlate"])
    }

    func testThePrimaryComesBackOnlyAfterDeliveringSteadily() {
        var m = machine()
        _ = m.decide(now: 0, lastArrival: nil, steadySince: nil, hasFrame: false)
        _ = m.decide(now: 2 * s, lastArrival: nil, steadySince: nil, hasFrame: false)
        XCTAssertEqual(m.onAir, .backup)
        // Frames again from 10 s: not steady long enough at 12 s, and a gap restarts the count.
        XCTAssertEqual(m.decide(now: 12 * s, lastArrival: 12 * s, steadySince: 10 * s, hasFrame: true).show, .backup)
        XCTAssertEqual(m.decide(now: 14 * s, lastArrival: 14 * s, steadySince: 13 * s, hasFrame: true).show, .backup)
        let back = m.decide(now: 16 * s, lastArrival: 16 * s, steadySince: 13 * s, hasFrame: true)
        XCTAssertEqual(back.show, .primary)
        XCTAssertEqual(back.events.map(\.name), ["inputRecovered", "switchedToPrimary"])
        XCTAssertEqual(m.switches, 2)
    }

    func testABackupThatFailsGivesWayToTheSlate() {
        var m = machine()
        _ = m.decide(now: 0, lastArrival: nil, steadySince: nil, hasFrame: false)
        _ = m.decide(now: 3 * s, lastArrival: nil, steadySince: nil, hasFrame: false)
        let events = m.backupFailed(LivePushError(.mediaReadFailed, "X.mp4: damaged"))
        XCTAssertEqual(events.map(\.name), ["backupFailed", "switchedToSlate"])
        XCTAssertEqual(m.decide(now: 4 * s, lastArrival: nil, steadySince: nil, hasFrame: false).show, .slate)
        XCTAssertEqual(m.backupFailed(LivePushError(.mediaReadFailed)), [], "reported once")
    }
}
