/// The transitions of ``PushState``. Pure, so every legal and illegal move is unit-tested
/// (`PushStateMachineTests`). Only ``PushControl`` holds one: while a push runs, its state is
/// decided there, with everything else the push decides (see its doc comment for why the table
/// stays a value of its own).
struct PushStateMachine: Sendable {
    enum Input: Sendable, Equatable {
        case start, published, pause, resume, stop, finished, lost, reconnected
        case fail(LivePushError)
    }

    private(set) var state: PushState = .idle

    /// Applies an input; an illegal one leaves the state alone and throws `invalidState`.
    @discardableResult
    mutating func apply(_ input: Input) throws(LivePushError) -> PushState {
        let next: PushState? = switch (state, input) {
        case (.idle, .start), (.stopped, .start), (.failed, .start): .connecting
        case (.connecting, .published): .pushing
        case (.pushing, .pause): .paused
        case (.paused, .resume): .pushing
        case (.pushing, .lost), (.reconnecting, .lost): .reconnecting
        case (.paused, .lost), (.paused, .reconnected): .paused
        case (.reconnecting, .reconnected): .pushing
        case (.connecting, .stop), (.pushing, .stop), (.paused, .stop), (.reconnecting, .stop): .stopping
        case (.stopping, .finished), (.pushing, .finished), (.paused, .finished), (.connecting, .finished),
             (.reconnecting, .finished): .stopped
        case (.connecting, .fail(let e)), (.pushing, .fail(let e)), (.paused, .fail(let e)), (.reconnecting, .fail(let e)):
            .failed(e)
        case (.stopping, .fail): .stopped
        default: nil
        }
        guard let next else { throw Self.refusal(of: input, while: state) }
        state = next
        return next
    }
}

extension PushStateMachine {
    /// The error an illegal input throws: `cannot pause while idle`.
    static func refusal(of input: Input, while state: PushState) -> LivePushError {
        LivePushError(.invalidState, "cannot \(input.verb) while \(state)")
    }
}

extension PushStateMachine.Input {
    var verb: String {
        switch self {
        case .start: "start"
        case .published: "begin pushing"
        case .pause: "pause"
        case .resume: "resume"
        case .stop: "stop"
        case .finished: "finish"
        case .lost: "lose the connection"
        case .reconnected: "reconnect"
        case .fail: "fail"
        }
    }
}
