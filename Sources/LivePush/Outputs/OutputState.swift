/// Everything about one output that more than one thread reads or changes: its queue, what was
/// asked of it (stop, pause, reconnect, the source's end), its connection's standing and its
/// figures. ``PushOutput`` keeps it under one `Mutex` and changes it only through these
/// methods, each an event that returns what the caller must do once the lock is released
/// (wake the sender, wake the producer, signal a change of the network). Pure: no clock, no
/// locks, no I/O; the time comes in with the events, so `OutputStateTests` drive it by hand.
///
/// Each side wakes the other only when it is actually waiting, and a producer blocked on a
/// full queue is woken only once the queue has drained to half: at thousands of packets per
/// second, a wake-up per packet would cost more CPU than the packets themselves.
struct OutputState {
    /// Whom an event wakes, once the lock is released.
    struct Wake: Equatable {
        /// The send loop serving the connection (``loop``; none while connecting).
        var sender = false
        /// A producer waiting for room (``PushOutput/waitForRoom(timeout:)``).
        var producer = false
    }

    /// What queueing a packet asks for.
    struct Queued: Equatable {
        var wakesSender = false
        var change: CongestionDetector.Change?
    }

    /// What the sender takes, and what taking it asks for.
    struct Taken {
        var take: PushOutput.Take
        var wakesProducer = false
        var change: CongestionDetector.Change?
    }

    /// Media queued (µs) past which the producer wakes a waiting sender without waiting itself:
    /// in real time two pacing batches (``PacingGate/batch``), in `--fast` mode a quarter of the
    /// queue, since nothing there waits on latency and each wake-up is two context switches
    /// (a 60 s push took ~300 at 40 ms).
    let wakeBatch: Int64
    var url: PushURL
    // Set by the events here and in `OutputState+Connecting.swift`, nowhere else.
    var queue: SendQueue
    /// Whether the current URL's auth_key or token has expired: a rejection then means
    /// `authExpired`, which no retry can fix. Set once before the output starts.
    var isURLExpired: @Sendable () -> Bool = { false }
    /// A WHIP output's bearer token (`--whip-token`; refreshed by `refreshPushURLToken(_:)`).
    var whipToken: String?
    /// The STUN/TURN servers the WHIP endpoint named in its last answer (`Link`): they come
    /// after the offer, so they serve the next connect.
    var whipICEServers: [ICEServer] = []

    // Set by the events here and in `OutputState+Connecting.swift`, nowhere else.
    var stopRequested = false
    var reconnectRequested = false
    var connected = false
    /// Reconnects this output began (``OutputStats/reconnects``).
    var reconnectsBegun = 0
    private(set) var sourceFinished = false
    private(set) var paused = false
    private var senderWaiting = false
    /// Set by the producer when it waits for room; cleared by whoever wakes it.
    private(set) var producerWaiting = false

    /// The send loop serving the published connection; nil while connecting.
    var loop: SendLoop?
    /// The last send loop that served it (``SendLoop/index``), kept after its pump ends for the figures.
    var lastLoopIndex: Int?
    /// While the output connects or reconnects: where that stands.
    var episode: PushOutput.ConnectEpisode?
    /// A server's reconnect request, while it is followed (`OutputState+ServerReconnect.swift`).
    var serverReconnect = ServerReconnectStateMachine()
    /// The connection published at the server's new URL, until the send loop switches to it.
    var successor: ServerReconnectSuccessor?
    /// Whether the stream has video: then only a keyframe may start a new connection.
    var carriesVideo = true

    private(set) var stats = PushStats()
    private var secondStartedAt: Int64
    private var secondBytes: Int64 = 0
    private var secondFrames = 0
    private var congestion: CongestionDetector
    /// The transport's own figures (SRT), as the connection last read them.
    private(set) var link: SRTLinkStats?
    /// A WebRTC output's link, and whether it counts as congested.
    private(set) var webRTCLink: WebRTCLinkStats?
    private var webRTCPoor = false

    init(config: PushConfig, url: PushURL, now: Int64) {
        self.url = url
        let limits = SendQueue.Limits(maxDuration: config.sendQueueMaxDuration.nanoseconds / 1000,
                                      maxBytes: config.sendQueueMaxBytes)
        queue = SendQueue(limits: limits, mode: config.pacing == .asFastAsPossible ? .backpressure : .dropping)
        // Real time: two batches, so that one batch alone (whose packets may span a whole batch
        // of media) never wakes the sender before the producer does at its end.
        wakeBatch = queue.mode == .backpressure ? max(PacingGate.batch, limits.maxDuration / 4) : 2 * PacingGate.batch
        congestion = CongestionDetector(poorBacklog: config.networkPoorBacklog.nanoseconds / 1000,
                                        recoveredBacklog: config.networkRecoveredBacklog.nanoseconds / 1000,
                                        hold: 500_000)
        secondStartedAt = now
    }

    /// The output starts: its figures' first second starts now.
    mutating func start(now: Int64) {
        secondStartedAt = now
    }

    // MARK: - Commands

    /// Everyone waiting looks again: the sender (a turn ends the pump, or sends again) and a
    /// producer waiting for room (a stopped output is never waited for).
    private mutating func wakeBoth() -> Wake {
        defer { producerWaiting = false }
        return Wake(sender: true, producer: producerWaiting)
    }

    mutating func stop() -> Wake {
        stopRequested = true
        return wakeBoth()
    }

    /// A reconnect asked for while the output publishes: its pump ends on it.
    mutating func requestReconnect() -> Wake {
        reconnectRequested = true
        return wakeBoth()
    }

    /// While paused the sender sends nothing (the queue keeps what it holds).
    mutating func setPaused(_ value: Bool) -> Wake {
        paused = value
        return wakeBoth()
    }

    /// The source has ended: send what is queued, then close.
    mutating func finishSource() -> Wake {
        sourceFinished = true
        return wakeBoth()
    }

    // MARK: - Producer side

    /// Whether the producer would have to wait for room before the next packet (back-pressure
    /// mode only; never once stopped), and whether the output is connected.
    var room: BackpressurePlan.Room {
        .init(isFull: mustWaitForRoom, isConnected: connected)
    }

    private var mustWaitForRoom: Bool { !stopRequested && queue.mode == .backpressure && queue.isFull }

    /// Back-pressure mode: the producer does not wait for this output, which is down while
    /// another carries the push (``BackpressurePlan``); it keeps its newest media, whole GOPs.
    mutating func shedWhileAnotherCarriesThePush() {
        // Reconnected since the producer looked: it is waited for again, and what it sends
        // again after the reconnect stays.
        guard queue.mode == .backpressure, !connected else { return }
        queue.makeRoomByDroppingOldestGOPs()
    }

    /// The producer is about to wait for room: true when it must (then it waits until
    /// `producerWaiting` is cleared, or its time is up, and calls ``stopWaitingForRoom()``).
    mutating func startWaitingForRoom() -> Bool {
        producerWaiting = mustWaitForRoom
        return producerWaiting
    }

    mutating func stopWaitingForRoom() {
        producerWaiting = false
    }

    /// Queues a packet stamped on the output clock; drops by the queue's policy when full.
    ///
    /// Back-pressure: the producer waits for room before each frame, so a frame and what goes
    /// with it (a cue, a sequence header) may take the queue past its limit, and so may a frame
    /// the producer let go just before the connection was lost and the resend history went back
    /// in: nothing is dropped for that here. Only the producer decides that an output is not
    /// waited for and sheds (``BackpressurePlan``).
    mutating func push(_ packet: MediaPacket, now: Int64) -> Queued {
        guard !stopRequested else { return Queued() }
        queue.push(packet)
        var queued = Queued(change: updateCongestion(now: now))
        // A producer that has no time to wait (it is catching up, or its input is late) wakes
        // the sender itself, every batch of media rather than every packet.
        if senderWaiting && queue.bufferedDuration >= wakeBatch {
            senderWaiting = false
            queued.wakesSender = true
        }
        return queued
    }

    /// The producer is about to sleep: a sender waiting for work takes the whole batch now,
    /// rather than waking for every packet. True when the sender is to be woken.
    mutating func producerSleeps() -> Bool {
        guard senderWaiting && !queue.isEmpty else { return false }
        senderWaiting = false
        return true
    }

    /// Real-time pushes only: a `--fast` push keeps its queue full on purpose. The producer sees
    /// the backlog grow while the sender is blocked in a write.
    private mutating func updateCongestion(now: Int64) -> CongestionDetector.Change? {
        guard queue.mode == .dropping else { return nil }
        return congestion.update(backlog: queue.bufferedDuration + linkBacklog, now: now)
    }

    /// What an SRT link holds beyond a round trip (µs): media SRT sent and has not had
    /// acknowledged. On a lossy or slow path it grows (retransmissions, a full window) before
    /// our own queue does, so it counts toward the backlog that decides `networkPoor`.
    private var linkBacklog: Int64 {
        guard let link else { return 0 }
        return max(0, Int64(link.sendBufferMs) * 1000 - Int64(2 * link.roundTripMs * 1000))
    }

    // MARK: - Sender side

    /// Why the pump ends now, if it does: a stop or a reconnect was asked for.
    var requestedEnd: PushOutput.PumpOutcome? {
        if stopRequested { return .stopped }
        if reconnectRequested { return .reconnectRequested }
        return nil
    }

    /// The next packet to send; counts the packet sent before it.
    mutating func take(afterSending sent: SentPacket?, now: Int64) -> Taken {
        if let sent { record(sent, now: now) }
        if let end = requestedEnd { return Taken(take: .ended(end)) }
        if successorTakesOver { return Taken(take: .ended(.switchover)) }
        if !paused, let packet = queue.pop() {
            let wakes = producerWaiting && queue.isAtMostHalfFull
            if wakes { producerWaiting = false }
            return Taken(take: .packet(packet), wakesProducer: wakes, change: updateCongestion(now: now))
        }
        if sourceFinished && queue.isEmpty { return Taken(take: .ended(.drained)) }
        // Nothing to send: a producer that waited for room must not wait for us.
        let wakes = producerWaiting
        producerWaiting = false
        senderWaiting = true
        return Taken(take: .none, wakesProducer: wakes)
    }

    /// Counts a packet that was written.
    mutating func record(_ sent: SentPacket, now: Int64) {
        stats.bytesSent += Int64(sent.bytes)
        // Frames only: a sequence header or a cue carries the time of what it precedes, and may
        // go out ahead of it (a splice's cue when the input before it ends).
        if sent.countsAs != .other { stats.mediaTimeSent = max(stats.mediaTimeSent, sent.dts) }
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
        if window >= MediaTime.microsecondsPerSecond {
            stats.bitrate = Int(secondBytes * 8 * MediaTime.microsecondsPerSecond / window)
            stats.fps = Double(secondFrames) / MediaTime.microseconds(window).seconds
            secondStartedAt = now
            secondBytes = 0
            secondFrames = 0
        }
    }

    /// SRT's counters: its unacknowledged span counts toward the congestion backlog.
    mutating func recordSRT(_ stats: SRTLinkStats, now: Int64) -> CongestionDetector.Change? {
        link = stats
        return updateCongestion(now: now)
    }

    /// A WebRTC output's link as its peer reports it: a change of quality, and the change of
    /// congestion it makes (poor, bad or down is congestion).
    mutating func recordWebRTC(_ stats: WebRTCLinkStats) -> (quality: NetworkQuality?, change: CongestionDetector.Change?) {
        webRTCLink = stats
        guard stats.qualityChanged, let quality = stats.quality else { return (nil, nil) }
        let poor = quality >= .poor
        guard poor != webRTCPoor else { return (quality, nil) }
        webRTCPoor = poor
        return (quality, poor ? .poor : .recovered)
    }

    // MARK: - Figures

    /// This output's figures (sent, dropped, queued); the session adds the source's.
    func snapshot(now: Int64) -> PushStats {
        var s = stats
        s.droppedFrames = queue.drops
        s.queuedPackets = queue.count
        s.queuedDuration = queue.bufferedDuration
        if now - secondStartedAt > 2_000_000 {
            s.bitrate = 0
            s.fps = 0
        }
        return s
    }
}
