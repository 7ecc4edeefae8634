import Synchronization

/// One destination of a push, whatever it speaks (RTMP, Enhanced RTMP, SRT): its own bounded
/// send queue and drop policy, its own connection and reconnect policy (stale sessions
/// included), congestion detection and figures. The producer hands it packets stamped on the
/// output clock; a connection worker (`PushOutput+Connecting.swift`) opens the ``RTMPSession``
/// or ``SRTSession``, and a shared ``SendLoop`` sends on it through its ``OutputConnection``.
///
/// Each output has its own state under its own lock (``OutputState``, changed only through its
/// events): a dead, stalled or stale destination sheds only its own queue and never blocks
/// another output's sender. (In `--fast` mode the producer waits for room in the queues of the
/// outputs that are connected; see ``PushEngine``.)
final class PushOutput: Sendable {
    /// What an output tells its ``PushEngine``.
    enum Signal: Sendable {
        case published(url: String)
        case firstFrameSent
        case connectionLost(LivePushError)
        /// A requested reconnect (`reconnect()`, a refreshed URL) closed the connection on purpose.
        case reconnectRequested
        case reconnecting(attempt: Int)
        /// Attempt `attempt` is made in `delay`, after `cause` (the first connect, with
        /// `retriesFirstConnect`, or a reconnect).
        case retryScheduled(attempt: Int, delay: Duration, cause: LivePushError)
        /// A reconnect was rejected because the server still holds the previous publisher.
        case staleSession(attempt: Int, waited: Duration, retryIn: Duration)
        case reconnected(url: String)
        case reconnectFailed(LivePushError)
        case network(CongestionDetector.Change)
        /// The first connect failed; the output is done.
        case connectFailed(LivePushError)
        /// Drained and closed after the end of the source, or stopped.
        case finished
        /// A WebRTC output's link, rated anew from the peer's receiver reports.
        case networkQuality(NetworkQuality)
        /// A WebRTC peer asked for a keyframe (PLI or FIR).
        case keyframeRequested
        /// The server asked the output to move (Enhanced RTMP v2 reconnect request) and it
        /// connects to `url` (redacted) in the background; the push goes on meanwhile.
        case serverReconnectRequested(url: String, description: String?)
        /// A server's reconnect request was refused or its new connection failed: the push
        /// stays on its connection (a warning, not a failure).
        case serverReconnectFailed(LivePushError)
        /// An HLS output started a cue's segment at the next keyframe, not at the cue's splice
        /// (a copied source had no keyframe there); output times (µs).
        case cueMoved(from: Int64, to: Int64)
        /// An RTMP server's connect answer (Enhanced RTMP), at each connection.
        case serverCapabilities(ServerCapabilities)
        /// The output goes on, not quite as asked (a codec or multitrack the server did not confirm).
        case warning(LivePushError)
    }

    /// The output's position in the push's list of destinations (0 for the first URL).
    let id: Int
    /// What the output speaks, from its URL (a refreshed URL keeps it).
    let kind: OutputKind
    let config: PushConfig
    /// The push's clock (``PushConfig/monotonicClock``): every time the output's state is told.
    let clock: any MonotonicClock
    let info: StreamInfo
    let signal: @Sendable (Signal) -> Void
    /// Everything the producer, the send loop, the connection workers and the app share.
    let state: Mutex<OutputState>
    /// Where a producer waiting for room sleeps (``waitForRoom(timeout:)``).
    private let roomSignal = ProgressSignal()
    /// `--fast` mode: what was sent is kept until the server acknowledged it (``ResendHistory``).
    let keepsHistory: Bool
    /// An HLS output's writer: its store, and its stream between connections (nil for the others).
    let hls: HLSWriter?

    init(id: Int, config: PushConfig, url: PushURL, info: StreamInfo, signal: @escaping @Sendable (Signal) -> Void) {
        self.id = id
        kind = OutputKind(url)
        self.config = config
        clock = config.monotonicClock
        self.info = info
        self.signal = signal
        var state = OutputState(config: config, url: url, now: clock.now().microseconds)
        state.carriesVideo = info.video != nil
        keepsHistory = state.queue.mode == .backpressure
        self.state = Mutex(state)
        hls = Self.hlsWriter(for: url, id: id, config: config)
    }

    /// Whether the current URL's auth_key or token has expired (see ``OutputState/isURLExpired``).
    var isURLExpired: @Sendable () -> Bool {
        get { state.withLock { $0.isURLExpired } }
        set { state.withLock { $0.isURLExpired = newValue } }
    }

    func start() {
        let now = clock.now().microseconds
        state.withLock { $0.start(now: now) }
        startConnecting()
    }

    /// Carries out an event's wake-ups, once the lock is released.
    private func follow(_ wake: OutputState.Wake, loop: SendLoop?) {
        if wake.sender { loop?.wake(self) }
        if wake.producer { roomSignal.wake() }
    }

    /// Runs a command's event under the lock, then wakes whom it says.
    private func command(_ event: (inout OutputState) -> OutputState.Wake) {
        let (wake, loop) = state.withLock { state in (event(&state), state.loop) }
        follow(wake, loop: loop)
    }

    // MARK: - Commands

    func requestStop() {
        command { $0.stop() }
        _ = resumeEpisode(reconnect: false)
    }

    /// Drops the current connection (if any) and connects again, now; also ends the wait
    /// after the automatic retries were used up.
    func requestReconnect() {
        if !resumeEpisode(reconnect: true) { command { $0.requestReconnect() } }
    }

    /// The bearer token for every later connect of a WHIP output.
    func updateWHIPToken(_ token: String) {
        state.withLock { $0.whipToken = token }
    }

    /// The URL used for every later connect (a refreshed auth_key).
    func updateURL(_ newURL: PushURL) {
        state.withLock { $0.url = newURL }
    }

    /// While paused the sender sends nothing (the queue keeps what it holds).
    func setPaused(_ value: Bool) {
        command { $0.setPaused(value) }
    }

    /// The source has ended: send what is queued, then close.
    func finishSource() {
        command { $0.finishSource() }
    }

    // MARK: - Producer side

    /// Whether the producer would have to wait for room before the next packet (back-pressure
    /// mode only; never once stopped), and whether the output is connected.
    var room: BackpressurePlan.Room {
        state.withLock { $0.room }
    }

    /// Back-pressure mode: the producer does not wait for this output, which is down while
    /// another carries the push (``BackpressurePlan``); it keeps its newest media, whole GOPs.
    func shedWhileAnotherCarriesThePush() {
        state.withLock { $0.shedWhileAnotherCarriesThePush() }
    }

    /// Waits until the queue has room (back-pressure mode), for at most `timeout`: until the
    /// sender has drained it to half, or has nothing to send, or a command changed the output.
    func waitForRoom(timeout: Duration) {
        wakeSender()
        guard state.withLock({ $0.startWaitingForRoom() }) else { return }
        roomSignal.wait(limit: timeout) { state.withLock { !$0.producerWaiting } }
        state.withLock { $0.stopWaitingForRoom() }
    }

    /// Queues a packet stamped on the output clock; drops by the queue's policy when full.
    func push(_ packet: MediaPacket) {
        // Only a real-time queue measures its backlog against the time (``OutputState/push(_:now:)``).
        let now = keepsHistory ? 0 : clock.now().microseconds
        let (queued, loop) = state.withLock { state in
            let queued = state.push(packet, now: now)
            return (queued, queued.wakesSender ? state.loop : nil)
        }
        loop?.wake(self)
        if let change = queued.change { signal(.network(change)) }
    }

    /// Wakes a sender that waits for work. The producer calls this before it sleeps, so that
    /// the sender takes a whole batch at once rather than waking for every packet.
    func wakeSender() {
        let loop = state.withLock { $0.producerSleeps() ? $0.loop : nil }
        loop?.wake(self)
    }

    // MARK: - Sender side

    /// What the send loop takes from the queue.
    enum Take {
        case packet(MediaPacket)
        /// Nothing to send now (empty, or paused): the output wakes the loop when there is.
        case none
        case ended(PumpOutcome)
    }

    /// Why the pump ends now, if it does: a stop or a reconnect was asked for.
    func requestedEnd() -> PumpOutcome? {
        state.withLock { $0.requestedEnd }
    }

    /// The next packet to send. Counts the packet sent before it in the same lock.
    func takePacket(afterSending sent: SentPacket?) -> Take {
        let now = clock.now().microseconds
        let taken = state.withLock { $0.take(afterSending: sent, now: now) }
        if taken.wakesProducer { roomSignal.wake() }
        if let change = taken.change { signal(.network(change)) }
        return taken.take
    }

    /// Counts a packet that was sent when no next one is taken (the pump ends).
    func recordSent(_ sent: SentPacket?) {
        guard let sent else { return }
        let now = clock.now().microseconds
        state.withLock { $0.record(sent, now: now) }
    }

    /// What the transport measured of the link, read by the connection at its service turns.
    func record(_ report: LinkReport) {
        switch report {
        case .srt(let stats): recordSRT(stats)
        case .webRTC(let stats): recordWebRTC(stats)
        case .hlsSplicesMoved(let moves): for move in moves { signal(.cueMoved(from: move.from, to: move.to)) }
        case .reconnectRequest(let request): serverAskedToReconnect(request)
        }
    }

    /// A WebRTC output's link as its peer reports it: a change of quality is signalled (and moves
    /// `networkPoor`: poor, bad or down is congestion), and so is a keyframe request.
    private func recordWebRTC(_ stats: WebRTCLinkStats) {
        let (quality, change) = state.withLock { $0.recordWebRTC(stats) }
        if let quality { signal(.networkQuality(quality)) }
        if let change { signal(.network(change)) }
        if stats.keyframeRequests > 0 { signal(.keyframeRequested) }
    }

    /// SRT's counters: its unacknowledged span counts toward the congestion backlog.
    private func recordSRT(_ stats: SRTLinkStats) {
        let now = clock.now().microseconds
        if let change = state.withLock({ $0.recordSRT(stats, now: now) }) { signal(.network(change)) }
    }

    /// The URL in use, with its secrets masked.
    var redactedURL: String { state.withLock { $0.url.redacted } }

    /// This output's figures for ``PushStats/outputs``.
    func outputStats() -> OutputStats {
        let now = clock.now().microseconds
        let hlsStats = hls?.figures.stats
        return state.withLock { state in
            let s = state.snapshot(now: now)
            return OutputStats(id: id, url: state.url.redacted, isConnected: state.connected, bytesSent: s.bytesSent,
                               videoFramesSent: s.videoFramesSent, audioFramesSent: s.audioFramesSent, bitrate: s.bitrate,
                               droppedFrames: s.droppedFrames, queuedDuration: s.queuedDuration, sendLateness: s.sendLateness,
                               kind: kind.rawValue, srt: state.link, webrtc: state.webRTCLink,
                               reconnects: state.reconnectsBegun, sendLoop: state.lastLoopIndex, hls: hlsStats)
        }
    }

    /// This output's figures (sent, dropped, queued); the session adds the source's.
    func snapshot() -> PushStats {
        let now = clock.now().microseconds
        return state.withLock { $0.snapshot(now: now) }
    }
}
