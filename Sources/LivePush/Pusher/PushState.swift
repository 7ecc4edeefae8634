/// Where a ``LivePusher`` is in its life.
///
/// ```
/// idle ──start──▶ connecting ──published──▶ pushing ◀──resume── paused
///                     │               lost │ ▲ │ ──pause──────────▶ │
///                     │                    ▼ │ reconnected          │
///                     │               reconnecting                  │
///                     ▼                        ▼                    ▼
///                  failed ◀──── error ─── stopping ◀──── stop ───── (any active)
///                                              │
///                                              ▼
///                                           stopped  (also at the end of the media)
/// ```
/// `stopped` and `failed` allow a new `start`. A connection lost while paused is restored
/// without leaving `paused`.
public enum PushState: Sendable, Equatable, CustomStringConvertible {
    /// Not started.
    case idle
    /// Connecting and publishing.
    case connecting
    /// Publishing and sending.
    case pushing
    /// Connected, not sending (or sending the pause image).
    case paused
    /// The connection was lost; LivePush is reconnecting, or waits for `reconnect()` after
    /// the retries were used up.
    case reconnecting
    /// Ending the push.
    case stopping
    /// Ended; a new start is allowed.
    case stopped
    /// Ended by this error; a new start is allowed.
    case failed(LivePushError)

    public var description: String {
        switch self {
        case .idle: "idle"
        case .connecting: "connecting"
        case .pushing: "pushing"
        case .paused: "paused"
        case .reconnecting: "reconnecting"
        case .stopping: "stopping"
        case .stopped: "stopped"
        case .failed: "failed"
        }
    }

    var isActive: Bool {
        switch self {
        case .connecting, .pushing, .paused, .reconnecting, .stopping: true
        case .idle, .stopped, .failed: false
        }
    }
}

/// The transitions of ``PushState``. Pure, so every legal and illegal move is unit-tested.
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
        case .lost: "lose the connection"
        case .reconnected: "reconnect"
        case .fail: "fail"
        }
    }
}
