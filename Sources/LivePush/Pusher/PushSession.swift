/// One run of a push on two threads:
///
/// - the **producer** reads the source, re-stamps packets onto the output clock, paces them
///   (real time) and puts them in the bounded ``SendQueue``;
/// - the **sender** owns the ``RTMPSession``: it connects, publishes, sends the stream header
///   and then whatever the queue holds.
///
/// They meet only in the lock-protected queue, so a slow network never stalls the source
/// beyond the queue's policy, and a slow source never stalls the server's replies.
final class PushSession: @unchecked Sendable {
    /// What the session tells its ``LivePusher``; the pusher turns these into state and events.
    enum Signal: Sendable {
        case published(url: String)
        case firstFrameSent
        case failed(LivePushError, phase: Phase)
        case finished
    }

    enum Phase: Sendable { case connecting, pushing, source }

    private let config: PushConfig
    private let url: PushURL
    private let info: StreamInfo
    private let signal: @Sendable (Signal) -> Void
    private let lock = ConditionLock()

    // Guarded by `lock`.
    private var queue: SendQueue
    private var stopRequested = false
    private var connected = false
    private var sourceFinished = false
    private var paused = false
    private var pausedSince: Int64 = 0
    private var pausedTotal: Int64 = 0
    private var stats = PushStats()
    private var startedAt: Int64 = 0
    private var secondStartedAt: Int64 = 0
    private var secondBytes: Int64 = 0
    private var secondFrames = 0
    /// Each side signals the other only when it is actually waiting, and a producer blocked on
    /// a full queue is woken only once the queue has drained to half: at thousands of packets
    /// per second, a wake-up per packet would cost more CPU than the packets themselves.
    private var senderWaiting = false
    private var producerWaiting = false

    init(config: PushConfig, url: PushURL, info: StreamInfo, signal: @escaping @Sendable (Signal) -> Void) {
        self.config = config
        self.url = url
        self.info = info
        self.signal = signal
        let limits = SendQueue.Limits(maxDuration: config.sendQueueMaxDuration.nanoseconds / 1000,
                                      maxBytes: config.sendQueueMaxBytes)
        queue = SendQueue(limits: limits, mode: config.pacing == .asFastAsPossible ? .backpressure : .dropping)
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

    private func runProducer(_ source: any MediaSource) {
        let ready = lock.withLock { () -> Bool in
            while !connected && !stopRequested { lock.wait() }
            return !stopRequested
        }
        guard ready else { return }
        var restamper = Restamper(info: info)
        var anchor: Int64?
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
                    if config.pacing == .realTime {
                        let start = anchor ?? (monotonicMicroseconds() - stamped.dts)
                        anchor = start
                        guard waitUntilDue(start + stamped.dts) else { return }
                    }
                    guard enqueue(stamped) else { return }
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

    /// Waits until the wall clock (less the time spent paused) reaches `due`; false on stop.
    private func waitUntilDue(_ due: Int64) -> Bool {
        lock.withLock {
            while !stopRequested {
                if paused {
                    lock.wait()
                    continue
                }
                let now = monotonicMicroseconds() - pausedTotal
                if now >= due { return true }
                lock.wait(timeout: .microseconds(due - now))
            }
            return false
        }
    }

    /// Queues a packet; in back-pressure mode waits for room. False on stop.
    private func enqueue(_ packet: MediaPacket) -> Bool {
        lock.withLock {
            while !stopRequested && (paused || (queue.mode == .backpressure && queue.isFull)) {
                producerWaiting = true
                lock.wait()
                producerWaiting = false
            }
            guard !stopRequested else { return false }
            queue.push(packet)
            if senderWaiting { lock.broadcast() }
            return true
        }
    }

    // MARK: - Sender

    private func runSender() {
        let options = RTMPSession.Options(connectTimeout: config.connectTimeout, receiveTimeout: config.responseTimeout,
                                          sendTimeout: config.sendDataTimeout, chunkSize: Int32(config.chunkSize))
        let session: RTMPSession
        do {
            session = try RTMPSession(url: url, options: options)
            try session.connectAndPublish()
        } catch {
            stopProducer()
            signal(.failed(error, phase: .connecting))
            return
        }
        lock.withLock {
            connected = true
            lock.broadcast()
        }
        signal(.published(url: url.redacted))

        let packetizer = FLVPacketizer(info: info)
        var firstFrameSent = false
        var lastServiced = monotonicMicroseconds()
        do {
            for message in packetizer.header() {
                try session.send(message)
            }
            while let packet = nextPacket() {
                let message = packetizer.message(for: packet)
                try session.send(message)
                record(packet, bytes: message.bodySize)
                if !firstFrameSent {
                    firstFrameSent = true
                    signal(.firstFrameSent)
                }
                let now = monotonicMicroseconds()
                if now - lastServiced > 100_000 {
                    lastServiced = now
                    try session.serviceIncoming()
                }
            }
            session.close(graceful: true)
        } catch {
            stopProducer()
            session.close(graceful: false)
            signal(.failed(error, phase: .pushing))
            return
        }
        signal(.finished)
    }

    /// The next packet to send, or nil when the push is over (stop, or source done and drained).
    private func nextPacket() -> MediaPacket? {
        lock.withLock {
            while true {
                if stopRequested { return nil }
                if !paused, let packet = queue.pop() {
                    if producerWaiting && queue.isAtMostHalfFull { lock.broadcast() }
                    return packet
                }
                if sourceFinished && queue.isEmpty { return nil }
                senderWaiting = true
                lock.wait(timeout: .milliseconds(100))
                senderWaiting = false
            }
        }
    }

    private func record(_ packet: MediaPacket, bytes: Int) {
        lock.withLock {
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

    private func stopProducer() {
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
