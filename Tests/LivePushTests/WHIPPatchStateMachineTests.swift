@testable import LivePush
import XCTest

/// When a WHIP session PATCHes: trickle ICE batches and bounds, an endpoint without trickle,
/// ICE restarts and the fall back to a new POST.
final class WHIPPatchStateMachineTests: XCTestCase {
    private typealias Machine = WHIPPatchStateMachine

    func testCandidatesWaitForTheBatchWindowThenGoTogether() {
        var machine = Machine(trickle: true)
        XCTAssertEqual(machine.next(now: 0), .wait(until: nil))
        machine.gathered("candidate:1", now: 1_000)
        machine.gathered("candidate:2", now: 20_000)
        XCTAssertEqual(machine.next(now: 20_000), .wait(until: 1_000 + Machine.batchWindow))
        XCTAssertEqual(machine.next(now: 1_000 + Machine.batchWindow), .trickle(candidates: ["candidate:1", "candidate:2"], end: false))
        XCTAssertFalse(machine.trickleDone)
        machine.trickled(.applied)
        machine.gathered("candidate:3", now: 60_000)
        machine.gatheringComplete()
        XCTAssertEqual(machine.next(now: 60_001), .trickle(candidates: ["candidate:3"], end: true), "the end goes with the last ones, at once")
        XCTAssertTrue(machine.trickleDone)
        XCTAssertEqual(machine.next(now: 70_000), .wait(until: nil))
    }

    func testTheEndOfCandidatesGoesAloneWhenNothingIsPending() {
        var machine = Machine(trickle: true)
        machine.gatheringComplete()
        XCTAssertEqual(machine.next(now: 0), .trickle(candidates: [], end: true))
        machine.trickled(.applied)
        XCTAssertEqual(machine.next(now: 1), .wait(until: nil))
        XCTAssertTrue(machine.trickleDone)
    }

    func testAPatchHoldsAtMostSixteenAndNoMoreThanSixtyFourGoInAll() {
        var machine = Machine(trickle: true)
        for index in 0..<70 { machine.gathered("candidate:\(index)", now: 0) }
        XCTAssertEqual(machine.dropped, 6)
        var sent: [String] = []
        while case .trickle(let batch, _) = machine.next(now: 0) {
            XCTAssertLessThanOrEqual(batch.count, Machine.maxCandidatesPerPatch)
            sent += batch
            machine.trickled(.applied)
        }
        XCTAssertEqual(sent, (0..<64).map { "candidate:\($0)" })
        machine.gathered("candidate:late", now: 1)
        XCTAssertEqual(machine.dropped, 7)
    }

    /// RFC 9725 §4.3.1: 405 or 501 means no trickle ICE: no more PATCHes, and no failure.
    func testAnEndpointWithoutTrickleGetsNoMorePatches() {
        for outcome in [Machine.Outcome.notSupported, .failed] {
            var machine = Machine(trickle: true)
            machine.gathered("candidate:1", now: 0)
            machine.gatheringComplete()
            XCTAssertEqual(machine.next(now: 0), .trickle(candidates: ["candidate:1"], end: true))
            machine.trickled(outcome)
            machine.gathered("candidate:2", now: 1)
            XCTAssertEqual(machine.next(now: 1_000_000), .wait(until: nil), "\(outcome)")
            XCTAssertTrue(machine.trickleDone)
        }
    }

    func testWithoutTrickleNothingIsPatched() {
        var machine = Machine(trickle: false)
        machine.gathered("candidate:1", now: 0)
        machine.gatheringComplete()
        XCTAssertEqual(machine.next(now: 1_000_000), .wait(until: nil))
        XCTAssertTrue(machine.trickleDone)
    }

    /// ICE lost for two seconds is a restart by PATCH; back before that, nothing.
    func testALostPathIsRestartedAfterTheBound() {
        var machine = Machine(trickle: false)
        machine.ice(.connected, now: 0)
        machine.ice(.lost, now: 1_000_000)
        XCTAssertEqual(machine.next(now: 1_500_000), .wait(until: 1_000_000 + Machine.restartAfter))
        machine.ice(.connected, now: 1_600_000)
        XCTAssertEqual(machine.next(now: 5_000_000), .wait(until: nil), "a blip")
        machine.ice(.lost, now: 6_000_000)
        XCTAssertEqual(machine.next(now: 8_000_000), .restartICE)
        XCTAssertEqual(machine.next(now: 9_000_000), .wait(until: nil), "one restart at a time")
        machine.restarted(.applied, now: 9_000_000)
        XCTAssertEqual(machine.next(now: 9_500_000), .wait(until: nil), "the new credentials get their time")
        machine.ice(.lost, now: 9_500_000)
        XCTAssertEqual(machine.next(now: 9_600_000), .wait(until: 9_500_000 + Machine.restartAfter), "counted from the next loss")
        machine.ice(.connected, now: 9_600_000)
        XCTAssertEqual(machine.next(now: 20_000_000), .wait(until: nil))
        XCTAssertEqual(machine.restarts, 0, "a connection resets the count")
    }

    func testANetworkChangeRestartsAtOnce() {
        var machine = Machine(trickle: false)
        machine.ice(.connected, now: 0)
        machine.networkDidChange()
        XCTAssertEqual(machine.next(now: 1), .restartICE)
        machine.restarted(.applied, now: 2)
        XCTAssertEqual(machine.next(now: 3), .wait(until: nil))
    }

    /// RFC 9725 §4.4: an endpoint that refuses the restart gets a new POST.
    func testARefusedRestartFallsBackToANewPost() {
        for outcome in [Machine.Outcome.notSupported, .failed] {
            var machine = Machine(trickle: false)
            machine.networkDidChange()
            XCTAssertEqual(machine.next(now: 0), .restartICE)
            machine.restarted(outcome, now: 1)
            XCTAssertEqual(machine.next(now: 2), .repost, "\(outcome)")
        }
    }

    func testRestartsThatNeverReconnectEndInANewPost() {
        var machine = Machine(trickle: false)
        machine.ice(.lost, now: 0)
        var now: Int64 = 0
        for _ in 0..<Machine.maxRestarts {
            now += Machine.restartAfter
            XCTAssertEqual(machine.next(now: now), .restartICE)
            machine.restarted(.applied, now: now)
            machine.ice(.lost, now: now)
        }
        now += Machine.restartAfter
        XCTAssertEqual(machine.next(now: now), .repost)
    }

    /// A cut link takes the PATCH with it: the restart is tried again after `restartAfter`,
    /// not given up for a new POST, until the budget is spent.
    func testARestartThatCannotReachTheEndpointIsTriedAgainWithinTheBudget() {
        var machine = Machine(trickle: false)
        machine.ice(.lost, now: 0)
        var now = Machine.restartAfter
        XCTAssertEqual(machine.next(now: now), .restartICE)
        machine.restarted(.unreachable, now: now)
        XCTAssertEqual(machine.next(now: now + 1), .wait(until: now + Machine.restartAfter), "no new POST yet")
        for _ in 1..<Machine.maxRestarts {
            now += Machine.restartAfter
            XCTAssertEqual(machine.next(now: now), .restartICE)
            machine.restarted(.unreachable, now: now)
        }
        now += Machine.restartAfter
        XCTAssertEqual(machine.next(now: now), .repost, "the budget is spent")
    }

    func testARestartThatReachesTheEndpointAfterAnUnreachableOneIsApplied() {
        var machine = Machine(trickle: false)
        machine.ice(.lost, now: 0)
        XCTAssertEqual(machine.next(now: Machine.restartAfter), .restartICE)
        machine.restarted(.unreachable, now: Machine.restartAfter)
        XCTAssertEqual(machine.next(now: 2 * Machine.restartAfter), .restartICE)
        machine.restarted(.applied, now: 2 * Machine.restartAfter)
        machine.ice(.connected, now: 2 * Machine.restartAfter + 1)
        XCTAssertEqual(machine.next(now: 3 * Machine.restartAfter), .wait(until: nil))
    }

    func testTheFragmentCarriesTheFirstSectionsCredentialsAndTheCandidates() throws {
        let offer = """
        v=0\r
        o=- 1 0 IN IP4 0.0.0.0\r
        s=-\r
        t=0 0\r
        a=group:BUNDLE video0 audio1\r
        m=video 9 UDP/TLS/RTP/SAVPF 96\r
        c=IN IP4 0.0.0.0\r
        a=ice-ufrag:AbCd\r
        a=ice-pwd:secretsecretsecret\r
        a=mid:video0\r
        m=audio 9 UDP/TLS/RTP/SAVPF 111\r
        a=ice-ufrag:Other\r
        a=ice-pwd:other\r
        a=mid:audio1\r

        """
        let fragment = try XCTUnwrap(TrickleFragment(offer: offer))
        XCTAssertEqual(fragment.body(candidates: ["candidate:1 1 UDP 2015363327 10.0.0.1 40000 typ host"], end: true), """
        m=video 9 UDP/TLS/RTP/SAVPF 96\r
        a=mid:video0\r
        a=ice-ufrag:AbCd\r
        a=ice-pwd:secretsecretsecret\r
        a=candidate:1 1 UDP 2015363327 10.0.0.1 40000 typ host\r
        a=end-of-candidates\r

        """)
        XCTAssertNil(TrickleFragment(offer: "v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\n"), "no credentials")
    }
}
