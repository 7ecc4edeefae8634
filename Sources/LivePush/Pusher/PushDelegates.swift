/// Info callbacks (reference: `AlivcLivePusherInfoDelegate`). Every method is optional.
/// Called on `PushConfig.callbackQueue`.
public protocol LivePusherInfoDelegate: AnyObject, Sendable {
    /// Connected and publishing.
    func pusherDidStart(_ pusher: LivePusher)
    func pusherDidPushFirstFrame(_ pusher: LivePusher)
    func pusherDidPause(_ pusher: LivePusher)
    func pusherDidResume(_ pusher: LivePusher)
    func pusherDidStop(_ pusher: LivePusher, stats: PushStats)
    func pusher(_ pusher: LivePusher, didUpdate stats: PushStats)
}

extension LivePusherInfoDelegate {
    public func pusherDidStart(_ pusher: LivePusher) {}
    public func pusherDidPushFirstFrame(_ pusher: LivePusher) {}
    public func pusherDidPause(_ pusher: LivePusher) {}
    public func pusherDidResume(_ pusher: LivePusher) {}
    public func pusherDidStop(_ pusher: LivePusher, stats: PushStats) {}
    public func pusher(_ pusher: LivePusher, didUpdate stats: PushStats) {}
}

/// Network callbacks (reference: `AlivcLivePusherNetworkDelegate`). Every method is optional.
public protocol LivePusherNetworkDelegate: AnyObject, Sendable {
    func pusher(_ pusher: LivePusher, connectFailed error: LivePushError)
    /// The connection dropped; LivePush reconnects by itself (`connectRetryCount`).
    func pusher(_ pusher: LivePusher, connectionLost error: LivePushError)
    func pusher(_ pusher: LivePusher, reconnectStarted attempt: Int)
    func pusherReconnectSucceeded(_ pusher: LivePusher)
    /// Retries are used up; call `reconnect()` when the network is back.
    func pusher(_ pusher: LivePusher, reconnectFailed error: LivePushError)
    func pusherNetworkPoor(_ pusher: LivePusher)
    func pusherNetworkRecovered(_ pusher: LivePusher)
    func pusherSendDataTimeout(_ pusher: LivePusher)
    /// About a minute before the push URL's auth_key expires. Return a freshly signed URL,
    /// or nil and call `refreshPushURL(_:)` later. The new URL is used from the next connect on;
    /// the current stream is not interrupted.
    func pusherPushURLAuthenticationOverdue(_ pusher: LivePusher) -> String?
    /// Interactive mode: about 30 s before the URL's token expires; call `refreshPushURLToken(_:)`.
    func pusherPushURLTokenWillExpire(_ pusher: LivePusher)
    /// Interactive mode: the token expired; restart the push with a new URL.
    func pusher(_ pusher: LivePusher, tokenExpired error: LivePushError)
}

extension LivePusherNetworkDelegate {
    public func pusher(_ pusher: LivePusher, connectFailed error: LivePushError) {}
    public func pusher(_ pusher: LivePusher, connectionLost error: LivePushError) {}
    public func pusher(_ pusher: LivePusher, reconnectStarted attempt: Int) {}
    public func pusherReconnectSucceeded(_ pusher: LivePusher) {}
    public func pusher(_ pusher: LivePusher, reconnectFailed error: LivePushError) {}
    public func pusherNetworkPoor(_ pusher: LivePusher) {}
    public func pusherNetworkRecovered(_ pusher: LivePusher) {}
    public func pusherSendDataTimeout(_ pusher: LivePusher) {}
    public func pusherPushURLAuthenticationOverdue(_ pusher: LivePusher) -> String? { nil }
    public func pusherPushURLTokenWillExpire(_ pusher: LivePusher) {}
    public func pusher(_ pusher: LivePusher, tokenExpired error: LivePushError) {}
}

/// Error callbacks (reference: `AlivcLivePusherErrorDelegate`). Every method is optional.
public protocol LivePusherErrorDelegate: AnyObject, Sendable {
    /// A failure of the system underneath (out of memory, RTMP start failed); the push stops.
    func pusher(_ pusher: LivePusher, systemError error: LivePushError)
    /// An SDK error with a code; see the README's error table for what each means.
    func pusher(_ pusher: LivePusher, sdkError error: LivePushError)
}

extension LivePusherErrorDelegate {
    public func pusher(_ pusher: LivePusher, systemError error: LivePushError) {}
    public func pusher(_ pusher: LivePusher, sdkError error: LivePushError) {}
}
