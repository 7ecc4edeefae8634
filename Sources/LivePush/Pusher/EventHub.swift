import Dispatch
import Synchronization

/// Fans events out to the delegates (on the callback queue) and to every `AsyncStream`.
///
/// Nothing in the media flow calls a delegate directly: the workers emit here, so a slow
/// delegate can never stall a socket write.
final class EventHub: Sendable {
    struct Delegates {
        weak var info: (any LivePusherInfoDelegate)?
        weak var network: (any LivePusherNetworkDelegate)?
        weak var error: (any LivePusherErrorDelegate)?
        weak var bgm: (any LivePusherBGMDelegate)?
        weak var filter: (any LivePusherFilterDelegate)?
    }

    private let delegates = Mutex(Delegates())
    private let continuations = Mutex<[Int: AsyncStream<PushEvent>.Continuation]>([:])
    private let nextID = Mutex(0)

    func update(_ body: (inout Delegates) -> Void) {
        delegates.withLock { body(&$0) }
    }

    func current() -> Delegates { delegates.withLock { $0 } }

    func makeStream() -> AsyncStream<PushEvent> {
        let id = nextID.withLock { id in
            id += 1
            return id
        }
        let (stream, continuation) = AsyncStream<PushEvent>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        continuation.onTermination = { [weak self] _ in
            _ = self?.continuations.withLock { $0.removeValue(forKey: id) }
        }
        continuations.withLock { $0[id] = continuation }
        return stream
    }

    func emit(_ event: PushEvent, from pusher: LivePusher, on queue: DispatchQueue) {
        // The delegate call is queued first: whoever sees an event in a stream can then rely on
        // its delegate call being on the callback queue already (a `sync {}` there waits for it).
        let delegates = current()
        queue.async {
            Self.deliver(event, to: delegates, from: pusher)
        }
        for continuation in continuations.withLock({ Array($0.values) }) {
            continuation.yield(event)
        }
    }

    private static func deliver(_ event: PushEvent, to d: Delegates, from p: LivePusher) {
        switch event {
        case .pushStarted: d.info?.pusherDidStart(p)
        case .firstFramePushed: d.info?.pusherDidPushFirstFrame(p)
        case .paused: d.info?.pusherDidPause(p)
        case .resumed: d.info?.pusherDidResume(p)
        case .stopped(let stats): d.info?.pusherDidStop(p, stats: stats)
        case .stats(let stats): d.info?.pusher(p, didUpdate: stats)
        case .stateChanged: break
        case .videoBitrateChanged(let from, let to): d.info?.pusher(p, videoBitrateChangedFrom: from, to: to)
        case .cueMoved(let from, let to): d.info?.pusher(p, cueMovedFrom: from, to: to)
        case .connectFailed(let e): d.network?.pusher(p, connectFailed: e)
        case .serverCapabilities(let capabilities): d.network?.pusher(p, serverCapabilities: capabilities)
        case .warning(let e): d.network?.pusher(p, warning: e)
        case .connectionLost(let e): d.network?.pusher(p, connectionLost: e)
        case .reconnectStarted(let attempt): d.network?.pusher(p, reconnectStarted: attempt)
        case .staleSession(let attempt, let waited, _): d.network?.pusher(p, serverHoldsPreviousSession: attempt, waited: waited)
        case .retryScheduled(let attempt, let delay, let cause): d.network?.pusher(p, retryScheduled: attempt, in: delay, after: cause)
        case .reconnectSucceeded: d.network?.pusherReconnectSucceeded(p)
        case .reconnectFailed(let e): d.network?.pusher(p, reconnectFailed: e)
        case .reconnectRequested(let url, let description): d.network?.pusher(p, reconnectRequestedTo: url, description: description)
        case .reconnectRequestFailed(let e): d.network?.pusher(p, reconnectRequestFailed: e)
        case .networkPoor: d.network?.pusherNetworkPoor(p)
        case .networkRecovered: d.network?.pusherNetworkRecovered(p)
        case .sendDataTimeout: d.network?.pusherSendDataTimeout(p)
        case .pushURLAuthenticationOverdue:
            if let refreshed = d.network?.pusherPushURLAuthenticationOverdue(p) {
                do {
                    try p.refreshPushURL(refreshed)
                } catch {
                    p.report(error)
                }
            }
        case .tokenWillExpire: d.network?.pusherPushURLTokenWillExpire(p)
        case .tokenExpired(let e): d.network?.pusher(p, tokenExpired: e)
        case .networkQualityChanged(let quality): d.network?.pusher(p, networkQualityChanged: quality)
        case .connectionStatusChanged(let status): d.network?.pusher(p, connectionStatusChanged: status)
        case .systemError(let e): d.error?.pusher(p, systemError: e)
        case .sdkError(let e): d.error?.pusher(p, sdkError: e)
        case .bgmStarted: d.bgm?.pusherBGMStarted(p)
        case .bgmStopped: d.bgm?.pusherBGMStopped(p)
        case .bgmPaused: d.bgm?.pusherBGMPaused(p)
        case .bgmResumed: d.bgm?.pusherBGMResumed(p)
        case .bgmProgress(let position, let duration): d.bgm?.pusher(p, bgmProgress: position, duration: duration)
        case .bgmCompleted: d.bgm?.pusherBGMCompleted(p)
        case .bgmOpenFailed(let e): d.bgm?.pusher(p, bgmOpenFailed: e)
        case .bgmDownloadTimeout(let e): d.bgm?.pusher(p, bgmDownloadTimeout: e)
        case .filterCreated(let name): d.filter?.pusher(p, filterCreated: name)
        case .filterDestroyed(let name): d.filter?.pusher(p, filterDestroyed: name)
        case .filterFailed(let name, let e): d.filter?.pusher(p, filterFailed: name, error: e)
        case .output(let id, let url, let event): d.network?.pusher(p, output: id, url: url, event: event)
        case .playout(let event): d.info?.pusher(p, playout: event)
        case .input(let event): d.info?.pusher(p, input: event)
        case .breaks(let event): d.info?.pusher(p, breaks: event)
        }
    }

    /// Ends every stream (after the final event of a pusher's life).
    func finishStreams() {
        for continuation in continuations.withLock({ Array($0.values) }) {
            continuation.finish()
        }
    }
}
