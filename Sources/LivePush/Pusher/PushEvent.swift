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
    /// The push was paused (``LivePusher/pause()``).
    case paused
    /// The push was resumed (``LivePusher/resume()``).
    case resumed
    /// The push ended: by `stop()`, at the end of the media, or after a fatal error.
    case stopped(PushStats)
    /// The figures, every ``PushConfig/statsInterval``.
    case stats(PushStats)
    /// The pusher's state changed.
    case stateChanged(PushState)
    /// Adaptive bitrate moved the video encoder's bitrate (kbit/s).
    case videoBitrateChanged(from: Int, to: Int)
    /// An HLS output started a cue's segment (and its tags) at the next keyframe, not at the
    /// cue's splice: a copied source had no keyframe there. Output times.
    case cueMoved(from: Duration, to: Duration)

    // Network
    /// What an RTMP server said it takes when the output connected (Enhanced RTMP's connect
    /// answer): the video and audio FourCCs it confirmed and its `capsEx`. Once per connection,
    /// when the server said any of it (a legacy server says nothing).
    case serverCapabilities(ServerCapabilities)
    /// The push goes on, but not quite as asked: a server did not confirm the codec sent
    /// (``LivePushError/Code/codecNotConfirmed``), or takes no multitrack video
    /// (``LivePushError/Code/multitrackNotConfirmed``). Once per connection and cause.
    case warning(LivePushError)
    /// The first connect or publish failed.
    case connectFailed(LivePushError)
    /// The connection dropped while pushing; a reconnect follows.
    case connectionLost(LivePushError)
    /// A reconnect attempt starts.
    case reconnectStarted(attempt: Int)
    /// A reconnect was answered "already publishing": the server still holds the previous
    /// publisher (the old path died silently). LivePush retries in `retryIn` without spending
    /// `connectRetryCount`, until `staleSessionGrace` has passed since the first such answer.
    case staleSession(attempt: Int, waited: Duration, retryIn: Duration)
    /// Attempt `attempt` will be made in `delay`, after `cause`: a reconnect, or a first connect
    /// that failed with `retriesFirstConnect` (a channel whose server is away).
    case retryScheduled(attempt: Int, delay: Duration, cause: LivePushError)
    /// Published again; the stream resumes on a keyframe.
    case reconnectSucceeded
    /// The retries (or the stale-session grace) are used up.
    case reconnectFailed(LivePushError)
    /// The server asked the push to move (Enhanced RTMP v2 `NetConnection.Connect.ReconnectRequest`,
    /// before maintenance or to balance its load): LivePush connects to `url` (redacted) in the
    /// background and switches at a keyframe, with no gap and no retry spent. Not a failure.
    case reconnectRequested(url: String, description: String?)
    /// A server's reconnect request was refused (another host, rtmps:// to rtmp://, no valid
    /// URL) or its new connection failed (``LivePushError/Code/reconnectRequestFailed``): a
    /// warning; the push goes on over its connection.
    case reconnectRequestFailed(LivePushError)
    /// Media is backing up in the send queue.
    case networkPoor
    /// The send queue is back to normal.
    case networkRecovered
    /// Nothing could be written for ``PushConfig/sendDataTimeout``.
    case sendDataTimeout
    /// The push URL's auth_key expires soon (`onPushURLAuthenticationOverdue`).
    case pushURLAuthenticationOverdue(url: String)
    /// Interactive mode: the URL's token expires in about 30 s; call `refreshPushURLToken(_:)`.
    case tokenWillExpire
    /// Interactive mode: the token has expired; the push must restart with a new URL.
    case tokenExpired(LivePushError)
    /// Interactive mode (`onPusherNetworkQualityChanged`): a WHIP output's uplink, rated anew.
    case networkQualityChanged(NetworkQuality)
    /// Interactive mode (`onConnectionStatusChange`): a WHIP push's connection.
    case connectionStatusChanged(ConnectionStatus)

    // Error
    /// A failure of the system underneath; the push stops.
    case systemError(LivePushError)
    /// Any other error, with its code.
    case sdkError(LivePushError)

    // Background music (see `LivePusher.startBGM`)
    /// The background music started.
    case bgmStarted
    /// The background music stopped.
    case bgmStopped
    /// The background music paused.
    case bgmPaused
    /// The background music resumed.
    case bgmResumed
    /// About once a second while the music plays.
    case bgmProgress(position: Duration, duration: Duration)
    /// A non-looping BGM reached its end.
    case bgmCompleted
    /// The background music could not be opened.
    case bgmOpenFailed(LivePushError)
    /// An http(s) background music stalled too long.
    case bgmDownloadTimeout(LivePushError)

    // Custom filters (see ``VideoFilter``)
    /// A filter was created.
    case filterCreated(name: String)
    /// A filter was destroyed.
    case filterDestroyed(name: String)
    /// The filter threw; it was removed and the push goes on.
    case filterFailed(name: String, LivePushError)

    // Several outputs (simulcast)
    /// What one destination reported, when a push has several (`start(file:urls:)`): its id (the
    /// position of its URL, from 0), its URL (redacted) and the event (`pushStarted`,
    /// `connectionLost`, `reconnectStarted`, `staleSession`, `reconnectSucceeded`,
    /// `reconnectFailed`, `connectFailed`, `networkPoor`, `networkRecovered`...). The un-tagged
    /// events describe the push as a whole (see ``LivePusher/start(file:urls:)``).
    indirect case output(id: Int, url: String, PushEvent)

    // Playout (info group)
    /// The channel's timeline moved on: an entry or an ad break started or ended, an entry
    /// failed and the slate stands in, or the running order changed.
    case playout(PlayoutEvent)
    /// A live input's primary lost or back, and the source on air (info group; see `FailoverInput`).
    case input(InputEvent)
    /// Cues read from the input, opportunities, resolvers, breaks and blackouts (info group).
    case breaks(BreakEvent)

    /// The five callback groups.
    public enum Group: String, Sendable {
        /// Lifecycle, statistics, bitrate, playout, inputs and breaks.
        case info
        /// Connection, reconnects, congestion and URL expiry.
        case network
        /// Errors.
        case error
        /// Background music.
        case bgm
        /// Custom filters.
        case filter
    }

    /// Which callback group the event belongs to.
    public var group: Group {
        switch self {
        case .pushStarted, .firstFramePushed, .paused, .resumed, .stopped, .stats, .stateChanged, .videoBitrateChanged, .cueMoved: .info
        case .connectFailed, .connectionLost, .reconnectStarted, .staleSession, .retryScheduled, .reconnectSucceeded, .reconnectFailed,
             .reconnectRequested, .reconnectRequestFailed,
             .networkPoor, .networkRecovered, .sendDataTimeout, .pushURLAuthenticationOverdue,
             .tokenWillExpire, .tokenExpired, .networkQualityChanged, .connectionStatusChanged, .serverCapabilities, .warning: .network
        case .systemError, .sdkError: .error
        case .bgmStarted, .bgmStopped, .bgmPaused, .bgmResumed, .bgmProgress, .bgmCompleted, .bgmOpenFailed,
             .bgmDownloadTimeout: .bgm
        case .filterCreated, .filterDestroyed, .filterFailed: .filter
        case .output(_, _, let event): event.group
        case .playout, .breaks, .input: .info
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
        case .videoBitrateChanged: "videoBitrateChanged"
        case .cueMoved: "cueMoved"
        case .serverCapabilities: "serverCapabilities"
        case .warning: "warning"
        case .connectFailed: "connectFailed"
        case .connectionLost: "connectionLost"
        case .reconnectStarted: "reconnectStarted"
        case .staleSession: "staleSession"
        case .retryScheduled: "retryScheduled"
        case .reconnectSucceeded: "reconnectSucceeded"
        case .reconnectFailed: "reconnectFailed"
        case .reconnectRequested: "reconnectRequested"
        case .reconnectRequestFailed: "reconnectRequestFailed"
        case .networkPoor: "networkPoor"
        case .networkRecovered: "networkRecovered"
        case .sendDataTimeout: "sendDataTimeout"
        case .pushURLAuthenticationOverdue: "pushURLAuthenticationOverdue"
        case .networkQualityChanged: "networkQualityChanged"
        case .connectionStatusChanged: "connectionStatusChanged"
        case .tokenWillExpire: "tokenWillExpire"
        case .tokenExpired: "tokenExpired"
        case .systemError: "systemError"
        case .sdkError: "sdkError"
        case .bgmStarted: "bgmStarted"
        case .bgmStopped: "bgmStopped"
        case .bgmPaused: "bgmPaused"
        case .bgmResumed: "bgmResumed"
        case .bgmProgress: "bgmProgress"
        case .bgmCompleted: "bgmCompleted"
        case .bgmOpenFailed: "bgmOpenFailed"
        case .bgmDownloadTimeout: "bgmDownloadTimeout"
        case .filterCreated: "filterCreated"
        case .filterDestroyed: "filterDestroyed"
        case .filterFailed: "filterFailed"
        case .output(_, _, let event): event.name
        case .playout(let event): event.name
        case .input(let event): event.name
        case .breaks(let event): event.name
        }
    }

    /// The error an event carries, if any.
    public var error: LivePushError? {
        switch self {
        case .connectFailed(let e), .connectionLost(let e), .reconnectFailed(let e), .systemError(let e), .sdkError(let e),
             .reconnectRequestFailed(let e),
             .tokenExpired(let e), .bgmOpenFailed(let e), .bgmDownloadTimeout(let e), .filterFailed(_, let e),
             .retryScheduled(_, _, let e), .warning(let e): e
        case .stateChanged(.failed(let e)): e
        case .output(_, _, let event): event.error
        case .playout(.entryFailed(_, let e)): e
        case .input(let event): event.error
        case .breaks(.cueRejected(let e)), .breaks(.opportunityFailed(_, let e)): e
        default: nil
        }
    }
}

/// Where an interactive-mode (WHIP) push's connection stands (`onConnectionStatusChange`).
public enum ConnectionStatus: String, Sendable {
    /// Not connected.
    case disconnected
    /// Connecting (ICE, DTLS).
    case connecting
    /// Connected; media flows.
    case connected
    /// The connection failed.
    case failed
}
