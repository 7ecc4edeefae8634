/// Where a ``LivePusher`` is in its life.
///
/// ```
/// idle ──start──▶ connecting ──published──▶ pushing ◀──resume── paused
///                     │                        │ ──pause──────────▶ │
///                     ▼                        ▼                    ▼
///                  failed ◀──── error ─── stopping ◀──── stop ───── (any active)
///                                              │
///                                              ▼
///                                           stopped  (also at the end of the media)
/// ```
/// `stopped` and `failed` allow a new `start`.
public enum PushState: Sendable, Equatable, CustomStringConvertible {
    case idle
    case connecting
    case pushing
    case paused
    case stopping
    case stopped
    case failed(LivePushError)

    public var description: String {
        switch self {
        case .idle: "idle"
        case .connecting: "connecting"
        case .pushing: "pushing"
        case .paused: "paused"
        case .stopping: "stopping"
        case .stopped: "stopped"
        case .failed: "failed"
        }
    }

    var isActive: Bool {
        switch self {
        case .connecting, .pushing, .paused, .stopping: true
        case .idle, .stopped, .failed: false
        }
    }
}

/// The transitions of ``PushState``. Pure, so every legal and illegal move is unit-tested.
struct PushStateMachine: Sendable {
    enum Input: Sendable, Equatable {
        case start, published, pause, resume, stop, finished
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
        case (.connecting, .stop), (.pushing, .stop), (.paused, .stop): .stopping
        case (.stopping, .finished), (.pushing, .finished), (.paused, .finished), (.connecting, .finished): .stopped
        case (.connecting, .fail(let e)), (.pushing, .fail(let e)), (.paused, .fail(let e)): .failed(e)
        case (.stopping, .fail): .stopped
        default: nil
        }
        guard let next else {
            throw LivePushError(.invalidState, "cannot \(input.verb) while \(state)")
        }
        state = next
        return next
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
        case .fail: "fail"
        }
    }
}
