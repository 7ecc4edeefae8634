/// Info callbacks (reference: `AlivcLivePusherInfoDelegate`). Every method is optional.
/// Called on `PushConfig.callbackQueue`.
public protocol LivePusherInfoDelegate: AnyObject, Sendable {
    /// Connected and publishing.
    func pusherDidStart(_ pusher: LivePusher)
    /// The first audio or video frame was written.
    func pusherDidPushFirstFrame(_ pusher: LivePusher)
    /// The push was paused.
    func pusherDidPause(_ pusher: LivePusher)
    /// The push was resumed.
    func pusherDidResume(_ pusher: LivePusher)
    /// The push ended (end of media, `stop()`, or a fatal error); always the last callback.
    func pusherDidStop(_ pusher: LivePusher, stats: PushStats)
    /// The figures, every ``PushConfig/statsInterval``.
    func pusher(_ pusher: LivePusher, didUpdate stats: PushStats)
    /// Adaptive bitrate moved the video encoder's bitrate (kbit/s).
    func pusher(_ pusher: LivePusher, videoBitrateChangedFrom old: Int, to new: Int)
    /// An HLS output started a cue's segment at the next keyframe, not at the cue's splice (a
    /// copied source had none there): output times.
    func pusher(_ pusher: LivePusher, cueMovedFrom splice: Duration, to keyframe: Duration)
    /// A playout channel's timeline moved on (entries, ad breaks, failures, changes).
    func pusher(_ pusher: LivePusher, playout event: PlayoutEvent)
    /// A live input's primary was lost or came back, or another source went on air.
    func pusher(_ pusher: LivePusher, input event: InputEvent)
    /// Cues, opportunities, resolvers, breaks and blackouts (``BreakEvent``).
    func pusher(_ pusher: LivePusher, breaks event: BreakEvent)
}

extension LivePusherInfoDelegate {
    public func pusherDidStart(_ pusher: LivePusher) {}
    /// Does nothing by default.
    public func pusherDidPushFirstFrame(_ pusher: LivePusher) {}
    /// Does nothing by default.
    public func pusherDidPause(_ pusher: LivePusher) {}
    /// Does nothing by default.
    public func pusherDidResume(_ pusher: LivePusher) {}
    /// Does nothing by default.
    public func pusherDidStop(_ pusher: LivePusher, stats: PushStats) {}
    /// Does nothing by default.
    public func pusher(_ pusher: LivePusher, didUpdate stats: PushStats) {}
    public func pusher(_ pusher: LivePusher, videoBitrateChangedFrom old: Int, to new: Int) {}
    /// Does nothing by default.
    public func pusher(_ pusher: LivePusher, cueMovedFrom splice: Duration, to keyframe: Duration) {}
    public func pusher(_ pusher: LivePusher, playout event: PlayoutEvent) {}
    public func pusher(_ pusher: LivePusher, input event: InputEvent) {}
    public func pusher(_ pusher: LivePusher, breaks event: BreakEvent) {}
}

/// Network callbacks (reference: `AlivcLivePusherNetworkDelegate`). Every method is optional.
public protocol LivePusherNetworkDelegate: AnyObject, Sendable {
    /// The first connect or publish failed; the error says why.
    func pusher(_ pusher: LivePusher, connectFailed error: LivePushError)
    /// The connection dropped; LivePush reconnects by itself (`connectRetryCount`).
    func pusher(_ pusher: LivePusher, connectionLost error: LivePushError)
    /// A reconnect attempt starts.
    func pusher(_ pusher: LivePusher, reconnectStarted attempt: Int)
    /// A reconnect was answered "already publishing": the server still holds the previous
    /// publisher. LivePush keeps trying for `staleSessionGrace` without spending retries.
    func pusher(_ pusher: LivePusher, serverHoldsPreviousSession attempt: Int, waited: Duration)
    /// Attempt `attempt` is made in `delay`, after `cause` (see ``PushEvent/retryScheduled(attempt:delay:cause:)``).
    func pusher(_ pusher: LivePusher, retryScheduled attempt: Int, in delay: Duration, after cause: LivePushError)
    /// With several outputs: what output `id` (its URL's position) reported; see ``PushEvent/output(id:url:_:)``.
    func pusher(_ pusher: LivePusher, output id: Int, url: String, event: PushEvent)
    /// Published again after a reconnect.
    func pusherReconnectSucceeded(_ pusher: LivePusher)
    /// Retries are used up; call `reconnect()` when the network is back.
    func pusher(_ pusher: LivePusher, reconnectFailed error: LivePushError)
    /// The server asked the push to move to `url` (redacted; Enhanced RTMP v2 reconnect
    /// request): LivePush switches there at a keyframe, with no gap. Not a failure.
    func pusher(_ pusher: LivePusher, reconnectRequestedTo url: String, description: String?)
    /// A server's reconnect request was refused or its new connection failed; the push goes on.
    func pusher(_ pusher: LivePusher, reconnectRequestFailed error: LivePushError)
    /// Media is backing up in the send queue.
    func pusherNetworkPoor(_ pusher: LivePusher)
    /// The send queue is back to normal.
    func pusherNetworkRecovered(_ pusher: LivePusher)
    /// Nothing could be written for ``PushConfig/sendDataTimeout``.
    func pusherSendDataTimeout(_ pusher: LivePusher)
    /// About a minute before the push URL's auth_key expires. Return a freshly signed URL,
    /// or nil and call `refreshPushURL(_:)` later. The new URL is used from the next connect on;
    /// the current stream is not interrupted.
    func pusherPushURLAuthenticationOverdue(_ pusher: LivePusher) -> String?
    /// Interactive mode: about 30 s before the URL's token expires; call `refreshPushURLToken(_:)`.
    func pusherPushURLTokenWillExpire(_ pusher: LivePusher)
    /// Interactive mode: the token expired; restart the push with a new URL.
    func pusher(_ pusher: LivePusher, tokenExpired error: LivePushError)
    /// Interactive mode: a WHIP output's uplink was rated anew (`onPusherNetworkQualityChanged`).
    func pusher(_ pusher: LivePusher, networkQualityChanged quality: NetworkQuality)
    /// Interactive mode: the WHIP connection's status (`onConnectionStatusChange`).
    func pusher(_ pusher: LivePusher, connectionStatusChanged status: ConnectionStatus)
    /// What an RTMP server said it takes, at each connection (``PushEvent/serverCapabilities(_:)``).
    func pusher(_ pusher: LivePusher, serverCapabilities capabilities: ServerCapabilities)
    /// The push goes on, not quite as asked (``PushEvent/warning(_:)``).
    func pusher(_ pusher: LivePusher, warning: LivePushError)
}

extension LivePusherNetworkDelegate {
    /// Does nothing by default.
    public func pusher(_ pusher: LivePusher, connectFailed error: LivePushError) {}
    /// Does nothing by default.
    public func pusher(_ pusher: LivePusher, serverCapabilities capabilities: ServerCapabilities) {}
    /// Does nothing by default.
    public func pusher(_ pusher: LivePusher, warning: LivePushError) {}
    public func pusher(_ pusher: LivePusher, connectionLost error: LivePushError) {}
    /// Does nothing by default.
    public func pusher(_ pusher: LivePusher, reconnectStarted attempt: Int) {}
    public func pusher(_ pusher: LivePusher, serverHoldsPreviousSession attempt: Int, waited: Duration) {}
    public func pusher(_ pusher: LivePusher, retryScheduled attempt: Int, in delay: Duration, after cause: LivePushError) {}
    public func pusher(_ pusher: LivePusher, output id: Int, url: String, event: PushEvent) {}
    /// Does nothing by default.
    public func pusherReconnectSucceeded(_ pusher: LivePusher) {}
    public func pusher(_ pusher: LivePusher, reconnectFailed error: LivePushError) {}
    /// Does nothing by default.
    public func pusher(_ pusher: LivePusher, reconnectRequestedTo url: String, description: String?) {}
    /// Does nothing by default.
    public func pusher(_ pusher: LivePusher, reconnectRequestFailed error: LivePushError) {}
    /// Does nothing by default.
    public func pusherNetworkPoor(_ pusher: LivePusher) {}
    /// Does nothing by default.
    public func pusherNetworkRecovered(_ pusher: LivePusher) {}
    /// Does nothing by default.
    public func pusherSendDataTimeout(_ pusher: LivePusher) {}
    public func pusherPushURLAuthenticationOverdue(_ pusher: LivePusher) -> String? { nil }
    public func pusherPushURLTokenWillExpire(_ pusher: LivePusher) {}
    public func pusher(_ pusher: LivePusher, tokenExpired error: LivePushError) {}
    public func pusher(_ pusher: LivePusher, networkQualityChanged quality: NetworkQuality) {}
    public func pusher(_ pusher: LivePusher, connectionStatusChanged status: ConnectionStatus) {}
}

/// Error callbacks (reference: `AlivcLivePusherErrorDelegate`). Every method is optional.
public protocol LivePusherErrorDelegate: AnyObject, Sendable {
    /// A failure of the system underneath (out of memory, RTMP start failed); the push stops.
    func pusher(_ pusher: LivePusher, systemError error: LivePushError)
    /// An SDK error with a code; see the error table in docs/errors.md for what each means.
    func pusher(_ pusher: LivePusher, sdkError error: LivePushError)
}

extension LivePusherErrorDelegate {
    public func pusher(_ pusher: LivePusher, systemError error: LivePushError) {}
    public func pusher(_ pusher: LivePusher, sdkError error: LivePushError) {}
}

/// Background-music callbacks (reference: `AlivcLivePusherBGMDelegate`). Every method is optional.
public protocol LivePusherBGMDelegate: AnyObject, Sendable {
    /// The music started.
    func pusherBGMStarted(_ pusher: LivePusher)
    /// The music stopped.
    func pusherBGMStopped(_ pusher: LivePusher)
    /// The music paused.
    func pusherBGMPaused(_ pusher: LivePusher)
    /// The music resumed.
    func pusherBGMResumed(_ pusher: LivePusher)
    /// About once a second while the music plays.
    func pusher(_ pusher: LivePusher, bgmProgress position: Duration, duration: Duration)
    /// A non-looping BGM reached its end.
    func pusherBGMCompleted(_ pusher: LivePusher)
    /// The music could not be opened (missing, not audio, unsupported); `startBGM` may be called again.
    func pusher(_ pusher: LivePusher, bgmOpenFailed error: LivePushError)
    /// An http(s) BGM stalled longer than the configured timeout; the push goes on without it.
    func pusher(_ pusher: LivePusher, bgmDownloadTimeout error: LivePushError)
}

extension LivePusherBGMDelegate {
    /// Does nothing by default.
    public func pusherBGMStarted(_ pusher: LivePusher) {}
    /// Does nothing by default.
    public func pusherBGMStopped(_ pusher: LivePusher) {}
    /// Does nothing by default.
    public func pusherBGMPaused(_ pusher: LivePusher) {}
    /// Does nothing by default.
    public func pusherBGMResumed(_ pusher: LivePusher) {}
    public func pusher(_ pusher: LivePusher, bgmProgress position: Duration, duration: Duration) {}
    public func pusherBGMCompleted(_ pusher: LivePusher) {}
    public func pusher(_ pusher: LivePusher, bgmOpenFailed error: LivePushError) {}
    public func pusher(_ pusher: LivePusher, bgmDownloadTimeout error: LivePushError) {}
}

/// Custom-filter lifecycle callbacks. The filter itself (``VideoFilter``) gets create,
/// process and destroy; this delegate lets the app observe them. Every method is optional.
public protocol LivePusherFilterDelegate: AnyObject, Sendable {
    /// A filter was created.
    func pusher(_ pusher: LivePusher, filterCreated name: String)
    /// A filter was destroyed.
    func pusher(_ pusher: LivePusher, filterDestroyed name: String)
    /// The filter threw and was removed; the push goes on.
    func pusher(_ pusher: LivePusher, filterFailed name: String, error: LivePushError)
}

extension LivePusherFilterDelegate {
    /// Does nothing by default.
    public func pusher(_ pusher: LivePusher, filterCreated name: String) {}
    /// Does nothing by default.
    public func pusher(_ pusher: LivePusher, filterDestroyed name: String) {}
    public func pusher(_ pusher: LivePusher, filterFailed name: String, error: LivePushError) {}
}
