/// One run of a push on two threads:
///
/// - the **producer** reads the source, re-stamps packets onto the output clock, paces them
///   (real time) and puts them in the bounded ``SendQueue``;
/// - the **sender** (see `PushSession+Sender.swift`) owns the ``RTMPSession``: it connects,
///   publishes, sends the stream header and then whatever the queue holds, and reconnects
///   when the connection is lost.
///
/// They meet only in the lock-protected state below, so a slow network never stalls the
/// source beyond the queue's policy, and a slow source never stalls the server's replies.
final class PushSession: @unchecked Sendable {
    /// What the session tells its ``LivePusher``; the pusher turns these into state and events.
    enum Signal: Sendable {
        case published(url: String)
        case firstFrameSent
        case connectionLost(LivePushError)
        /// A requested reconnect (`reconnect()`, a refreshed URL) closed the connection on purpose.
        case reconnectRequested
        case reconnecting(attempt: Int)
        /// A reconnect was rejected because the server still holds the previous publisher.
        case staleSession(attempt: Int, waited: Duration, retryIn: Duration)
        case reconnected(url: String)
        case reconnectFailed(LivePushError)
        case network(CongestionDetector.Change)
        case failed(LivePushError, phase: Phase)
        case finished
    }

    enum Phase: Sendable { case connecting, pushing, source }

    let config: PushConfig
    let info: StreamInfo
    let signal: @Sendable (Signal) -> Void
    /// The local recording beside the network output (`PushConfig.recordPath`), fed by the producer.
    let recorder: FLVRecorder?
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
    private var pausedSince: Int64 = 0
    private var pausedTotal: Int64 = 0
    var stats = PushStats()
    private var startedAt: Int64 = 0
    private var secondStartedAt: Int64 = 0
    private var secondBytes: Int64 = 0
    private var secondFrames = 0
    private var congestion: CongestionDetector
    /// Each side signals the other only when it is actually waiting, and a producer blocked on
    /// a full queue is woken only once the queue has drained to half: at thousands of packets
    /// per second, a wake-up per packet would cost more CPU than the packets themselves.
    var senderWaiting = false
    private var producerWaiting = false

    init(config: PushConfig, url: PushURL, info: StreamInfo, recorder: FLVRecorder? = nil,
         signal: @escaping @Sendable (Signal) -> Void) {
        self.config = config
        self.url = url
        self.info = info
        self.recorder = recorder
        // The recording is closed before the pusher hears that the push ended, so that the file
        // is complete when `stopped` arrives.
        self.signal = { event in
            switch event {
            case .finished, .failed: recorder?.finish()
            default: break
            }
            signal(event)
        }
        let limits = SendQueue.Limits(maxDuration: config.sendQueueMaxDuration.nanoseconds / 1000,
                                      maxBytes: config.sendQueueMaxBytes)
        queue = SendQueue(limits: limits, mode: config.pacing == .asFastAsPossible ? .backpressure : .dropping)
        congestion = CongestionDetector(poorBacklog: config.networkPoorBacklog.nanoseconds / 1000,
                                        recoveredBacklog: config.networkRecoveredBacklog.nanoseconds / 1000,
                                        hold: 500_000)
        stats.sourceDuration = info.duration
    }

    func start(source: UncheckedTransfer<any MediaSource>) {
        startedAt = monotonicMicroseconds()
        secondStartedAt = startedAt
        WorkerThread.start(name: "livepush.send") { self.runSender() }
        WorkerThread.start(name: "livepush.source") { self.runProducer(source.value) }
    }

    func requestStop() {
        lock.withLock {
            stopRequested = true
            lock.broadcast()
        }
    }

    /// Drops the current connection (if any) and connects again, now; also ends the wait
    /// after the automatic retries were used up.
    func requestReconnect() {
        lock.withLock {
            reconnectRequested = true
            lock.broadcast()
        }
    }

    /// The URL used for every later connect (a refreshed auth_key).
    func updateURL(_ newURL: PushURL) {
        lock.withLock { url = newURL }
    }

    func setPaused(_ value: Bool) {
        lock.withLock {
            guard paused != value else { return }
            paused = value
            let now = monotonicMicroseconds()
            if value { pausedSince = now } else { pausedTotal += now - pausedSince }
            lock.broadcast()
        }
    }

    func snapshot() -> PushStats {
        lock.withLock {
            var s = stats
            let now = monotonicMicroseconds()
            s.elapsed = .microseconds(now - startedAt)
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

    // MARK: - Producer

    /// How far ahead of the wall clock a real-time packet may be released (µs).
    static let pacingSlack: Int64 = 80_000

    private func runProducer(_ source: any MediaSource) {
        let ready = lock.withLock { () -> Bool in
            while !connected && !stopRequested { lock.wait() }
            return !stopRequested
        }
        guard ready else { return }
        var restamper = Restamper(info: info)
        var anchor: Int64?
        var batchEnd = Int64.min
        var pass = 1
        var sawKeyframe = false
        do {
            while true {
                while let packet = try source.nextPacket() {
                    // A stream starts on a keyframe: frames before the first one (a file cut
                    // mid-GOP) cannot be decoded by anyone.
                    if packet.kind == .video && !sawKeyframe {
                        guard packet.isKeyframe else { continue }
                        sawKeyframe = true
                    }
                    let stamped = restamper.stamp(packet)
                    var due: Int64?
                    if config.pacing == .realTime {
                        let start = anchor ?? (monotonicMicroseconds() - stamped.dts)
                        anchor = start
                        // Packets due within the pacing slack of one that had to wait go out
                        // with it: one wake-up per batch instead of one per packet.
                        let packetDue = start + stamped.dts
                        if packetDue > batchEnd {
                            due = packetDue
                            batchEnd = packetDue + Self.pacingSlack
                        }
                    }
                    guard enqueue(stamped, due: due) else { return }
                    recorder?.offer(stamped)
                }
                if case .times(let total) = config.looping, pass >= total { break }
                if lock.withLock({ stopRequested }) { return }
                try source.rewind()
                restamper.beginNextPass()
                pass += 1
                lock.withLock { stats.loopsCompleted = pass - 1 }
            }
            lock.withLock {
                stats.loopsCompleted = pass
                sourceFinished = true
                lock.broadcast()
            }
        } catch {
            lock.withLock {
                stopRequested = true
                lock.broadcast()
            }
            signal(.failed(error, phase: .source))
        }
    }

    /// Queues a packet once it is `due` (real time: wall clock less the time spent paused)
    /// and there is room (back-pressure mode). False on stop. One lock acquisition per packet;
    /// the sender is woken only when the producer is about to sleep, so that it takes a whole
    /// batch at once.
    private func enqueue(_ packet: MediaPacket, due: Int64?) -> Bool {
        var change: CongestionDetector.Change?
        let queued = lock.withLock { () -> Bool in
            while !stopRequested {
                let blocked = paused || (queue.mode == .backpressure && queue.isFull)
                let wait: Duration?
                if blocked {
                    wait = nil
                } else if let due {
                    let left = due - (monotonicMicroseconds() - pausedTotal)
                    if left <= 0 { break }
                    wait = .microseconds(left)
                } else {
                    break
                }
                if senderWaiting && !queue.isEmpty { lock.broadcast() }
                producerWaiting = blocked
                lock.wait(timeout: wait)
                producerWaiting = false
            }
            guard !stopRequested else { return false }
            queue.push(packet)
            change = updateCongestion()
            return true
        }
        if let change { signal(.network(change)) }
        return queued
    }

    /// Called with the lock held by both threads: the producer sees the backlog grow while
    /// the sender is blocked in a write. Real-time pushes only: a `--fast` push keeps its
    /// queue full on purpose.
    func updateCongestion() -> CongestionDetector.Change? {
        guard queue.mode == .dropping else { return nil }
        return congestion.update(backlog: queue.bufferedDuration, now: monotonicMicroseconds())
    }

    /// The next packet to send, or nil when the push is over (stop, reconnect requested, or
    /// source done and drained). Counts the packet sent before it in the same lock.
    func nextPacket(afterSending sent: (packet: MediaPacket, bytes: Int)?) -> MediaPacket? {
        var change: CongestionDetector.Change?
        defer { if let change { signal(.network(change)) } }
        return lock.withLock {
            if let sent { record(sent.packet, bytes: sent.bytes) }
            while true {
                if stopRequested || reconnectRequested { return nil }
                if !paused, let packet = queue.pop() {
                    if producerWaiting && queue.isAtMostHalfFull { lock.broadcast() }
                    change = updateCongestion()
                    return packet
                }
                if sourceFinished && queue.isEmpty { return nil }
                // Nothing to send: a producer that waited for room must not wait for us.
                if producerWaiting { lock.broadcast() }
                senderWaiting = true
                // Bounded so that an idle sender still services the server's messages.
                lock.wait(timeout: .milliseconds(250))
                senderWaiting = false
            }
        }
    }

    /// Called with the lock held.
    private func record(_ packet: MediaPacket, bytes: Int) {
        do {
            stats.bytesSent += Int64(bytes)
            stats.mediaTimeSent = max(stats.mediaTimeSent, packet.dts)
            secondBytes += Int64(bytes)
            if packet.kind == .video {
                stats.videoFramesSent += 1
                secondFrames += 1
            } else {
                stats.audioFramesSent += 1
            }
            let now = monotonicMicroseconds()
            let window = now - secondStartedAt
            if window >= 1_000_000 {
                stats.bitrate = Int(secondBytes * 8 * 1_000_000 / window)
                stats.fps = Double(secondFrames) * 1_000_000 / Double(window)
                secondStartedAt = now
                secondBytes = 0
                secondFrames = 0
            }
        }
    }

    func stopProducer() {
        lock.withLock {
            stopRequested = true
            lock.broadcast()
        }
    }
}

/// Hands a non-Sendable value to exactly one other thread. The sender gives up all use of it.
struct UncheckedTransfer<Value>: @unchecked Sendable {
    let value: Value
}
