/// What a live input reports (``PushEvent/input(_:)``, info group): its primary lost and back,
/// and which source is on air.
public enum InputEvent: Sendable, Equatable {
    /// The primary delivered no media for the input timeout (`inputLost`).
    case lost(LivePushError)
    /// The primary delivered steadily again; the output switches back to it.
    case recovered
    /// The output now shows this source.
    case switched(to: LiveInputSource)
    /// The backup could not be played (`backupFailed` carries why); the slate stands in.
    case backupFailed(LivePushError)
    /// The primary's connection failed or ended; it is tried again in `retryIn`.
    case primaryRetry(LivePushError, retryIn: Duration)

    /// The event's name, for logs and JSON.
    public var name: String {
        switch self {
        case .lost: "inputLost"
        case .recovered: "inputRecovered"
        case .switched(let source): "switchedTo" + source.rawValue.prefix(1).uppercased() + source.rawValue.dropFirst()
        case .backupFailed: "backupFailed"
        case .primaryRetry: "inputRetry"
        }
    }

    /// The error the event carries, if any.
    public var error: LivePushError? {
        switch self {
        case .lost(let error), .backupFailed(let error), .primaryRetry(let error, _): error
        case .recovered, .switched: nil
        }
    }
}

/// What a live input's output shows.
public enum LiveInputSource: String, Sendable, Equatable, CaseIterable {
    /// The live feed itself.
    case primary
    /// The backup file or URL.
    case backup
    /// The slate (its picture, or black).
    case slate
}
