/// One destination of a push, whatever it speaks (RTMP, Enhanced RTMP, SRT): its own bounded
/// send queue and drop policy, its own connection and reconnect policy (stale sessions
/// included), congestion detection and figures. The producer hands it packets stamped on the
/// output clock; a connection worker (`PushOutput+Connecting.swift`) opens the ``RTMPSession``
/// or ``SRTSession``, and a shared ``SendLoop`` sends on it through its ``OutputConnection``.
///
/// Each output has its own lock: a dead, stalled or stale destination sheds only its own queue
/// and never blocks another output's sender. (In `--fast` mode the producer waits for room in
/// the queues of the outputs that are connected; see ``PushEngine``.)
final class PushOutput: @unchecked Sendable {
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
    }

    /// The output's position in the push's list of destinations (0 for the first URL).
    let id: Int
    /// What the output speaks, from its URL's scheme (a refreshed URL keeps it).
    let kind: PushURL.Scheme
    let config: PushConfig
    let info: StreamInfo
    let signal: @Sendable (Signal) -> Void
    let lock = ConditionLock()
    /// Whether the current URL's auth_key or token has expired: a rejection then means
    /// `authExpired`, which no retry can fix. Set once before `start`.
    var isURLExpired: @Sendable () -> Bool = { false }

    // Guarded by `lock`.
    var url: PushURL
    var queue: SendQueue
    var stopRequested = false
    var reconnectRequested = false
    var connected = false
    var sourceFinished = false
    var paused = false
    var stats = PushStats()
    private var secondStartedAt: Int64 = 0
    private var secondBytes: Int64 = 0
    private var secondFrames = 0
    private var congestion: CongestionDetector
    /// The transport's own figures (SRT), as the connection last read them.
    private var link: SRTLinkStats?
    /// A WebRTC output's link, and whether it counts as congested.
    private var webRTCLink: WebRTCLinkStats?
    private var webRTCPoor = false
    /// A WHIP output's bearer token (`--whip-token`; refreshed by `refreshPushURLToken(_:)`).
    var whipToken: String?
    /// The STUN/TURN servers the WHIP endpoint named in its last answer (`Link`): they come
    /// after the offer, so they serve the next connect.
    var whipICEServers: [ICEServer] = []
    /// Each side signals the other only when it is actually waiting, and a producer blocked on
    /// a full queue is woken only once the queue has drained to half: at thousands of packets
    /// per second, a wake-up per packet would cost more CPU than the packets themselves.
    var senderWaiting = false
    private var producerWaiting = false
    /// The send loop serving the published connection; nil while connecting.
    var loop: SendLoop?
    /// The last send loop that served it (``SendLoop/index``), kept after its pump ends for the figures.
    var lastLoopIndex: Int?
    /// While the output connects or reconnects: where that stands.
    var episode: ConnectEpisode?
    /// Media queued (µs) past which the producer wakes a waiting sender without waiting itself:
    /// in real time two pacing batches (``PacingGate/batch``), in `--fast` mode a quarter of the
    /// queue, since nothing there waits on latency and each wake-up is two context switches
    /// (a 60 s push took ~300 at 40 ms).
    let wakeBatch: Int64

    init(id: Int, config: PushConfig, url: PushURL, info: StreamInfo, signal: @escaping @Sendable (Signal) -> Void) {
        self.id = id
        kind = url.scheme
        self.config = config
        self.url = url
        self.info = info
        self.signal = signal
        let limits = SendQueue.Limits(maxDuration: config.sendQueueMaxDuration.nanoseconds / 1000,
                                      maxBytes: config.sendQueueMaxBytes)
        queue = SendQueue(limits: limits, mode: config.pacing == .asFastAsPossible ? .backpressure : .dropping)
        // Real time: two batches, so that one batch alone (whose packets may span a whole batch
        // of media) never wakes the sender before the producer does at its end.
        wakeBatch = queue.mode == .backpressure ? max(PacingGate.batch, limits.maxDuration / 4) : 2 * PacingGate.batch
        congestion = CongestionDetector(poorBacklog: config.networkPoorBacklog.nanoseconds / 1000,
                                        recoveredBacklog: config.networkRecoveredBacklog.nanoseconds / 1000,
                                        hold: 500_000)
    }

    func start() {
        secondStartedAt = monotonicMicroseconds()
        startConnecting()
    }

    /// Under the lock: marks the change; then the loop (or the connect thread) is woken.
    private func changeAndWake(_ change: () -> Void) {
        let loop = lock.withLock {
            change()
            lock.broadcast()
            return self.loop
        }
        loop?.wake(self)
    }

    // MARK: - Commands

    func requestStop() {
        changeAndWake { stopRequested = true }
        _ = resumeEpisode(reconnect: false)
    }

    /// Drops the current connection (if any) and connects again, now; also ends the wait
    /// after the automatic retries were used up.
    func requestReconnect() {
        if !resumeEpisode(reconnect: true) { changeAndWake { reconnectRequested = true } }
    }

    /// The bearer token for every later connect of a WHIP output.
    func updateWHIPToken(_ token: String) {
        lock.withLock { whipToken = token }
    }

    /// The URL used for every later connect (a refreshed auth_key).
    func updateURL(_ newURL: PushURL) {
        lock.withLock { url = newURL }
    }

    /// While paused the sender sends nothing (the queue keeps what it holds).
    func setPaused(_ value: Bool) {
        changeAndWake { paused = value }
    }

    /// The source has ended: send what is queued, then close.
    func finishSource() {
        changeAndWake { sourceFinished = true }
    }

    // MARK: - Producer side

    /// Whether the producer would have to wait for room before the next packet (back-pressure
    /// mode only; never once stopped), and whether the output is connected.
    var room: BackpressurePlan.Room {
        lock.withLock { .init(isFull: !stopRequested && queue.mode == .backpressure && queue.isFull, isConnected: connected) }
    }

    /// Back-pressure mode: the producer does not wait for this output, which is down while
    /// another carries the push (``BackpressurePlan``); it keeps its newest media, whole GOPs.
    func shedWhileAnotherCarriesThePush() {
        lock.withLock {
            // Reconnected since the producer looked: it is waited for again, and what it
            // sends again after the reconnect stays.
            guard queue.mode == .backpressure, !connected else { return }
            queue.makeRoomByDroppingOldestGOPs()
        }
    }

    /// Waits until the queue has room (back-pressure mode), for at most `timeout`.
    func waitForRoom(timeout: Duration) {
        wakeSender()
        lock.withLock {
            guard !stopRequested, queue.mode == .backpressure, queue.isFull else { return }
            producerWaiting = true
            lock.wait(timeout: timeout)
            producerWaiting = false
        }
    }

    /// Queues a packet stamped on the output clock; drops by the queue's policy when full.
    func push(_ packet: MediaPacket) {
        var change: CongestionDetector.Change?
        var wake: SendLoop?
        defer { wake?.wake(self) }
        lock.withLock {
            guard !stopRequested else { return }
            defer {
                // A producer that has no time to wait (it is catching up, or its input is late)
                // wakes the sender itself, every 40 ms of media rather than every packet.
                if senderWaiting && queue.bufferedDuration >= wakeBatch {
                    senderWaiting = false
                    wake = loop
                }
            }
            // Back-pressure: the producer waits for room before each frame, so a frame and what
            // goes with it (a cue, a sequence header) may take the queue past its limit, and so
            // may a frame the producer let go just before the connection was lost and the
            // resend history went back in: nothing is dropped for that here. Only the producer
            // decides that an output is not waited for and sheds (``BackpressurePlan``).
            queue.push(packet)
            change = updateCongestion()
        }
        if let change { signal(.network(change)) }
    }

    /// Wakes a sender that waits for work. The producer calls this before it sleeps, so that
    /// the sender takes a whole batch at once rather than waking for every packet.
    func wakeSender() {
        let loop = lock.withLock { () -> SendLoop? in
            guard senderWaiting && !queue.isEmpty else { return nil }
            senderWaiting = false
            return self.loop
        }
        loop?.wake(self)
    }

    /// Called with the lock held by both threads: the producer sees the backlog grow while
    /// the sender is blocked in a write. Real-time pushes only: a `--fast` push keeps its
    /// queue full on purpose.
    func updateCongestion() -> CongestionDetector.Change? {
        guard queue.mode == .dropping else { return nil }
        return congestion.update(backlog: queue.bufferedDuration + linkBacklog, now: monotonicMicroseconds())
    }

    /// What an SRT link holds beyond a round trip (µs): media SRT sent and has not had
    /// acknowledged. On a lossy or slow path it grows (retransmissions, a full window) before
    /// our own queue does, so it counts toward the backlog that decides `networkPoor`.
    private var linkBacklog: Int64 {
        guard let link else { return 0 }
        return max(0, Int64(link.sendBufferMs) * 1000 - Int64(2 * link.roundTripMs * 1000))
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
        lock.withLock { requestedEndLocked }
    }

    /// Called with the lock held.
    private var requestedEndLocked: PumpOutcome? {
        if stopRequested { return .stopped }
        if reconnectRequested { return .reconnectRequested }
        return nil
    }

    /// The next packet to send. Counts the packet sent before it in the same lock.
    func takePacket(afterSending sent: SentPacket?) -> Take {
        var change: CongestionDetector.Change?
        defer { if let change { signal(.network(change)) } }
        return lock.withLock {
            if let sent { record(sent) }
            if let end = requestedEndLocked { return .ended(end) }
            if !paused, let packet = queue.pop() {
                if producerWaiting && queue.isAtMostHalfFull { lock.broadcast() }
                change = updateCongestion()
                return .packet(packet)
            }
            if sourceFinished && queue.isEmpty { return .ended(.drained) }
            // Nothing to send: a producer that waited for room must not wait for us.
            if producerWaiting { lock.broadcast() }
            senderWaiting = true
            return .none
        }
    }

    /// Counts a packet that was sent when no next one is taken (the pump ends).
    func recordSent(_ sent: SentPacket?) {
        guard let sent else { return }
        lock.withLock { record(sent) }
    }

    /// Called with the lock held.
    private func record(_ sent: SentPacket) {
        let now = monotonicMicroseconds()
        stats.bytesSent += Int64(sent.bytes)
        stats.mediaTimeSent = max(stats.mediaTimeSent, sent.dts)
        if sent.due != .min { stats.sendLateness.record(now - sent.due) }
        secondBytes += Int64(sent.bytes)
        switch sent.countsAs {
        case .videoFrame:
            stats.videoFramesSent += 1
            secondFrames += 1
        case .audioFrame:
            stats.audioFramesSent += 1
        case .other:
            break  // a configuration or a cue, not a frame
        }
        let window = now - secondStartedAt
        if window >= 1_000_000 {
            stats.bitrate = Int(secondBytes * 8 * 1_000_000 / window)
            stats.fps = Double(secondFrames) * 1_000_000 / Double(window)
            secondStartedAt = now
            secondBytes = 0
            secondFrames = 0
        }
    }

    /// What the transport measured of the link, read by the connection at its service turns.
    func record(_ report: LinkReport) {
        switch report {
        case .srt(let stats): recordSRT(stats)
        case .webRTC(let stats): recordWebRTC(stats)
        }
    }

    /// A WebRTC output's link as its peer reports it: a change of quality is signalled (and moves
    /// `networkPoor`: poor, bad or down is congestion), and so is a keyframe request.
    private func recordWebRTC(_ stats: WebRTCLinkStats) {
        var signals: [Signal] = []
        lock.withLock {
            webRTCLink = stats
            if stats.qualityChanged, let quality = stats.quality {
                signals.append(.networkQuality(quality))
                let poor = quality >= .poor
                if poor != webRTCPoor {
                    webRTCPoor = poor
                    signals.append(.network(poor ? .poor : .recovered))
                }
            }
        }
        if stats.keyframeRequests > 0 { signals.append(.keyframeRequested) }
        for signal in signals { self.signal(signal) }
    }

    /// SRT's counters: its unacknowledged span counts toward the congestion backlog.
    private func recordSRT(_ stats: SRTLinkStats) {
        let change = lock.withLock {
            link = stats
            return updateCongestion()
        }
        if let change { signal(.network(change)) }
    }

    /// The URL in use, with its secrets masked.
    var redactedURL: String { lock.withLock { url.redacted } }

    /// This output's figures for ``PushStats/outputs``.
    func outputStats() -> OutputStats {
        let s = snapshot()
        return lock.withLock {
            OutputStats(id: id, url: url.redacted, isConnected: connected, bytesSent: s.bytesSent,
                        videoFramesSent: s.videoFramesSent, audioFramesSent: s.audioFramesSent, bitrate: s.bitrate,
                        droppedFrames: s.droppedFrames, queuedDuration: s.queuedDuration, sendLateness: s.sendLateness,
                        kind: kind.isWHIP ? "whip" : kind.rawValue, srt: link, webrtc: webRTCLink,
                        sendLoop: lastLoopIndex)
        }
    }

    /// This output's figures (sent, dropped, queued); the session adds the source's.
    func snapshot() -> PushStats {
        lock.withLock {
            var s = stats
            s.droppedFrames = queue.drops
            s.queuedPackets = queue.count
            s.queuedDuration = queue.bufferedDuration
            if monotonicMicroseconds() - secondStartedAt > 2_000_000 {
                s.bitrate = 0
                s.fps = 0
            }
            return s
        }
    }
}
