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
