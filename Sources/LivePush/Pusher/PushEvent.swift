/// Everything a push reports, in the reference SDK's three groups (info, network, error).
///
/// The same events reach the delegates (on `PushConfig.callbackQueue`) and every
/// ``LivePusher/events()`` stream, in the same order.
public enum PushEvent: Sendable, Equatable {
    // Info
    /// Connected to the server and publishing (`onPushStarted`).
    case pushStarted(url: String)
    /// The first audio or video frame was sent (`onFirstFramePushed`).
    case firstFramePushed
    case paused
    case resumed
    /// The push ended: by `stop()`, at the end of the media, or after a fatal error.
    case stopped(PushStats)
    case stats(PushStats)
    case stateChanged(PushState)

    // Network
    case connectFailed(LivePushError)
    case connectionLost(LivePushError)
    case reconnectStarted(attempt: Int)
    case reconnectSucceeded
    case reconnectFailed(LivePushError)
    case networkPoor
    case networkRecovered
    case sendDataTimeout
    /// The push URL's auth_key expires soon (`onPushURLAuthenticationOverdue`).
    case pushURLAuthenticationOverdue(url: String)
    /// Interactive mode: the URL's token expires in about 30 s; call `refreshPushURLToken(_:)`.
    case tokenWillExpire
    /// Interactive mode: the token has expired; the push must restart with a new URL.
    case tokenExpired(LivePushError)

    // Error
    case systemError(LivePushError)
    case sdkError(LivePushError)

    public enum Group: String, Sendable { case info, network, error }

    public var group: Group {
        switch self {
        case .pushStarted, .firstFramePushed, .paused, .resumed, .stopped, .stats, .stateChanged: .info
        case .connectFailed, .connectionLost, .reconnectStarted, .reconnectSucceeded, .reconnectFailed,
             .networkPoor, .networkRecovered, .sendDataTimeout, .pushURLAuthenticationOverdue,
             .tokenWillExpire, .tokenExpired: .network
        case .systemError, .sdkError: .error
        }
    }

    /// A stable camelCase name, used in JSON output.
    public var name: String {
        switch self {
        case .pushStarted: "pushStarted"
        case .firstFramePushed: "firstFramePushed"
        case .paused: "paused"
        case .resumed: "resumed"
        case .stopped: "stopped"
        case .stats: "stats"
        case .stateChanged: "stateChanged"
        case .connectFailed: "connectFailed"
        case .connectionLost: "connectionLost"
        case .reconnectStarted: "reconnectStarted"
        case .reconnectSucceeded: "reconnectSucceeded"
        case .reconnectFailed: "reconnectFailed"
        case .networkPoor: "networkPoor"
        case .networkRecovered: "networkRecovered"
        case .sendDataTimeout: "sendDataTimeout"
        case .pushURLAuthenticationOverdue: "pushURLAuthenticationOverdue"
        case .tokenWillExpire: "tokenWillExpire"
        case .tokenExpired: "tokenExpired"
        case .systemError: "systemError"
        case .sdkError: "sdkError"
        }
    }

    /// The error an event carries, if any.
    public var error: LivePushError? {
        switch self {
        case .connectFailed(let e), .connectionLost(let e), .reconnectFailed(let e), .systemError(let e), .sdkError(let e),
             .tokenExpired(let e): e
        case .stateChanged(.failed(let e)): e
        default: nil
        }
    }
}
