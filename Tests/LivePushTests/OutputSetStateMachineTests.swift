import XCTest
@testable import LivePush

final class OutputSetStateMachineTests: XCTestCase {
    private let lost = LivePushError(.connectionLost)
    private let refused = LivePushError(.connectionRefused)

    private func names(_ decision: OutputSetStateMachine.Decision) -> [String] {
        decision.forward.map { signal in
            switch signal {
            case .published: "published"
            case .firstFrameSent: "firstFrameSent"
            case .connectionLost: "connectionLost"
            case .reconnectRequested: "reconnectRequested"
            case .reconnecting: "reconnecting"
            case .staleSession: "staleSession"
            case .retryScheduled: "retryScheduled"
            case .reconnected: "reconnected"
            case .reconnectFailed: "reconnectFailed"
            case .network(let change): change == .poor ? "poor" : "recovered"
            case .connectFailed: "failed"
            case .finished: "finished"
            case .networkQuality(let quality): quality.rawValue
            case .keyframeRequested: "keyframeRequested"
            case .cueMoved: "cueMoved"
            case .serverCapabilities: "serverCapabilities"
            case .warning: "warning"
            case .serverReconnectRequested: "serverReconnectRequested"
            case .serverReconnectFailed: "serverReconnectFailed"
            }
        }
    }

    func testOneOutputPassesEverythingThrough() {
        var m = OutputSetStateMachine(count: 1)
        let inputs: [PushOutput.Signal] = [
            .published(url: "u"), .firstFrameSent, .network(.poor), .connectionLost(lost), .reconnecting(attempt: 1),
            .staleSession(attempt: 1, waited: .zero, retryIn: .seconds(1)), .reconnected(url: "u"), .network(.recovered),
            .connectionLost(lost), .reconnecting(attempt: 1), .reconnectFailed(refused), .finished,
        ]
        let out = inputs.flatMap { names(m.apply($0, from: 0)) }
        XCTAssertEqual(out, ["published", "firstFrameSent", "poor", "connectionLost", "reconnecting", "staleSession",
                             "reconnected", "recovered", "connectionLost", "reconnecting", "reconnectFailed", "finished"])
    }

    func testOneFailedFirstConnectFailsASingleOutputPush() {
        var m = OutputSetStateMachine(count: 1)
        XCTAssertEqual(names(m.apply(.connectFailed(refused), from: 0)), ["failed"])
    }

    func testThePushIsLostOnlyWhenNoOutputPublishes() {
        var m = OutputSetStateMachine(count: 2)
        XCTAssertEqual(names(m.apply(.published(url: "a"), from: 0)), ["published"])
        XCTAssertEqual(names(m.apply(.published(url: "b"), from: 1)), [])
        XCTAssertEqual(names(m.apply(.connectionLost(lost), from: 1)), [], "output 0 still carries the push")
        XCTAssertEqual(names(m.apply(.reconnecting(attempt: 1), from: 1)), [], "per-output only")
        XCTAssertEqual(names(m.apply(.connectionLost(lost), from: 0)), ["connectionLost"])
        XCTAssertEqual(names(m.apply(.reconnected(url: "b"), from: 1)), ["reconnected"])
        XCTAssertEqual(names(m.apply(.reconnected(url: "a"), from: 0)), [])
    }

    func testFailsOnlyWhenEveryFirstConnectFailed() {
        var m = OutputSetStateMachine(count: 3)
        XCTAssertEqual(names(m.apply(.connectFailed(refused), from: 0)), [])
        XCTAssertFalse(m.canStartProducing)
        XCTAssertEqual(names(m.apply(.published(url: "b"), from: 1)), ["published"])
        XCTAssertTrue(m.canStartProducing)
        XCTAssertEqual(names(m.apply(.connectFailed(refused), from: 2)), [])
        XCTAssertEqual(names(m.apply(.finished, from: 1)), ["finished"])

        var all = OutputSetStateMachine(count: 2)
        XCTAssertEqual(names(all.apply(.connectFailed(refused), from: 0)), [])
        XCTAssertEqual(names(all.apply(.connectFailed(refused), from: 1)), ["failed"])
        XCTAssertTrue(all.canStartProducing, "the producer must not wait for outputs that will never publish")
    }

    func testCongestionFollowsTheSlowestPublishingOutput() {
        var m = OutputSetStateMachine(count: 2)
        _ = m.apply(.published(url: "a"), from: 0)
        _ = m.apply(.published(url: "b"), from: 1)
        XCTAssertEqual(names(m.apply(.network(.poor), from: 0)), ["poor"])
        XCTAssertEqual(names(m.apply(.network(.poor), from: 1)), [])
        XCTAssertEqual(names(m.apply(.network(.recovered), from: 0)), [], "output 1 is still poor")
        XCTAssertEqual(names(m.apply(.network(.recovered), from: 1)), ["recovered"])
        // A congested output that dies no longer holds the rate down for the healthy one.
        _ = m.apply(.network(.poor), from: 1)
        XCTAssertEqual(names(m.apply(.connectionLost(LivePushError(.connectionLost, "x")), from: 1)), ["recovered"])
    }

    func testOutputsThatGaveUpAreStoppedOnceTheOthersAreDoneAndRetriesUsedUpNeedsEveryone() {
        var m = OutputSetStateMachine(count: 2)
        _ = m.apply(.published(url: "a"), from: 0)
        _ = m.apply(.published(url: "b"), from: 1)
        _ = m.apply(.connectionLost(lost), from: 1)
        let gaveUp = m.apply(.reconnectFailed(refused), from: 1)
        XCTAssertEqual(names(gaveUp), [], "output 0 still carries the push")
        XCTAssertEqual(gaveUp.stop, [])
        let done = m.apply(.finished, from: 0)
        XCTAssertEqual(done.stop, [1], "nobody will call reconnect() for it before the push ends")
        XCTAssertEqual(names(m.apply(.finished, from: 1)), ["finished"])

        var both = OutputSetStateMachine(count: 2)
        _ = both.apply(.published(url: "a"), from: 0)
        _ = both.apply(.connectionLost(lost), from: 0)
        _ = both.apply(.connectFailed(refused), from: 1)
        XCTAssertEqual(names(both.apply(.reconnectFailed(refused), from: 0)), ["reconnectFailed"])
    }

    /// A WHIP output holds the start until its first connect settles: nginx publishing first
    /// does not start the producer, the WHIP output publishing (or failing, or scheduling a
    /// retry) does.
    func testAnOutputThatHoldsTheStartIsWaitedForUntilItsFirstConnectSettles() {
        var m = OutputSetStateMachine(count: 2, holdingTheStart: [1])
        XCTAssertEqual(names(m.apply(.published(url: "rtmp"), from: 0)), ["published"])
        XCTAssertFalse(m.canStartProducing, "the WHIP output is still connecting")
        _ = m.apply(.published(url: "whip"), from: 1)
        XCTAssertTrue(m.canStartProducing)

        var retrying = OutputSetStateMachine(count: 2, holdingTheStart: [1])
        _ = retrying.apply(.published(url: "rtmp"), from: 0)
        _ = retrying.apply(.retryScheduled(attempt: 1, delay: .seconds(1), cause: refused), from: 1)
        XCTAssertTrue(retrying.canStartProducing, "a first connect that failed does not hold the others")

        var failed = OutputSetStateMachine(count: 2, holdingTheStart: [1])
        _ = failed.apply(.connectFailed(refused), from: 1)
        XCTAssertFalse(failed.canStartProducing, "nobody publishes yet")
        _ = failed.apply(.published(url: "rtmp"), from: 0)
        XCTAssertTrue(failed.canStartProducing)
    }
}
