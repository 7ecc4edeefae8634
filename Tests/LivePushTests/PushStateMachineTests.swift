import XCTest
@testable import LivePush

final class PushStateMachineTests: XCTestCase {
    func testHappyPath() throws {
        var m = PushStateMachine()
        XCTAssertEqual(try m.apply(.start), .connecting)
        XCTAssertEqual(try m.apply(.published), .pushing)
        XCTAssertEqual(try m.apply(.pause), .paused)
        XCTAssertEqual(try m.apply(.resume), .pushing)
        XCTAssertEqual(try m.apply(.stop), .stopping)
        XCTAssertEqual(try m.apply(.finished), .stopped)
        XCTAssertEqual(try m.apply(.start), .connecting, "a stopped pusher can start again")
    }

    func testIllegalTransitionsThrowInvalidStateAndKeepTheState() {
        let illegal: [(PushState, PushStateMachine.Input)] = [
            (.idle, .pause), (.idle, .resume), (.idle, .stop), (.idle, .published),
            (.connecting, .start), (.connecting, .pause), (.connecting, .resume),
            (.pushing, .start), (.pushing, .resume), (.paused, .pause), (.paused, .start),
            (.stopped, .pause), (.stopped, .stop),
        ]
        for (state, input) in illegal {
            var m = machine(in: state)
            XCTAssertThrowsError(try m.apply(input), "\(state) + \(input)") { error in
                XCTAssertEqual((error as? LivePushError)?.code, .invalidState)
            }
            XCTAssertEqual(m.state, state)
        }
    }

    func testReconnectCycle() throws {
        var m = machine(in: .pushing)
        XCTAssertEqual(try m.apply(.lost), .reconnecting)
        XCTAssertThrowsError(try m.apply(.pause))
        XCTAssertEqual(try m.apply(.reconnected), .pushing)
        var paused = machine(in: .paused)
        XCTAssertEqual(try paused.apply(.lost), .paused, "a pause survives a reconnect")
        XCTAssertEqual(try paused.apply(.reconnected), .paused)
        var giveUp = machine(in: .reconnecting)
        XCTAssertEqual(try giveUp.apply(.stop), .stopping)
    }

    func testFailureFromEveryActiveState() throws {
        let error = LivePushError(.connectionRefused)
        for state in [PushState.connecting, .pushing, .paused, .reconnecting] {
            var m = machine(in: state)
            XCTAssertEqual(try m.apply(.fail(error)), .failed(error))
            XCTAssertEqual(try m.apply(.start), .connecting)
        }
    }

    private func machine(in state: PushState) -> PushStateMachine {
        var m = PushStateMachine()
        let path: [PushStateMachine.Input] = switch state {
        case .idle: []
        case .connecting: [.start]
        case .pushing: [.start, .published]
        case .paused: [.start, .published, .pause]
        case .reconnecting: [.start, .published, .lost]
        case .stopping: [.start, .stop]
        case .stopped: [.start, .stop, .finished]
        case .failed(let e): [.start, .fail(e)]
        }
        for input in path { _ = try? m.apply(input) }
        XCTAssertEqual(m.state, state)
        return m
    }
}
