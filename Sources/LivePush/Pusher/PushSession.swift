/// One run of a push: a **producer** thread reads the source, stamps packets onto the output
/// clock (``Restamper``), paces them (real time) and hands each to every output: the
/// ``RTMPOutput``s (one per destination, each with its own queue, connection and sender thread)
/// and the local ``FLVRecorder``. What the outputs report is folded by an
/// ``OutputSetStateMachine`` into what the push as a whole reports.
///
/// The producer meets each output only in that output's lock, so a slow or dead destination
/// never stalls the source beyond its own queue's policy, nor the other destinations.
final class PushSession: @unchecked Sendable {
    /// What the session tells its ``LivePusher``; the pusher turns these into state and events.
    enum Signal: Sendable {
        /// The push as a whole, in an output's terms (with one output: what that output says).
        case push(RTMPOutput.Signal)
        /// Reading, decoding or encoding the source failed; the push ends.
        case sourceFailed(LivePushError)
        /// With several outputs: what output `id` reported, for the app to see per destination.
        case output(id: Int, url: String, RTMPOutput.Signal)
    }

    let config: PushConfig
    let info: StreamInfo
    let outputs: [RTMPOutput]
    /// The local recording beside the network outputs (`PushConfig.recordPath`).
    let recorder: FLVRecorder?
    private let signal: @Sendable (Signal) -> Void
    private let lock = ConditionLock()
    /// Outputs report from their own threads; folding a signal and passing on what it means
    /// happen under this lock, so the pusher hears the push's changes in the order they happened.
    private let delivery = ConditionLock()

    // Guarded by `lock`.
    private var outputStates: OutputSetStateMachine
    private var stopRequested = false
    private var paused = false
    private var pausedSince: Int64 = 0
    private var pausedTotal: Int64 = 0
    private var loopsCompleted = 0
    private var startedAt: Int64 = 0

    init(config: PushConfig, urls: [PushURL], info: StreamInfo, recorder: FLVRecorder? = nil,
         signal: @escaping @Sendable (Signal) -> Void) {
        self.config = config
        self.info = info
        self.recorder = recorder
        // The recording is closed before the pusher hears that the push ended, so that the file
        // is complete when `stopped` arrives.
        self.signal = { event in
            switch event {
            case .push(.finished), .push(.connectFailed), .sourceFailed: recorder?.finish()
            default: break
            }
            signal(event)
        }
        outputStates = OutputSetStateMachine(count: urls.count)
        var outputs: [RTMPOutput] = []
        let forward = UncheckedTransfer(value: WeakSession())
        for (id, url) in urls.enumerated() {
            outputs.append(RTMPOutput(id: id, config: config, url: url, info: info) { outputSignal in
                forward.value.session?.handle(outputSignal, from: id)
            })
        }
        self.outputs = outputs
        forward.value.session = self
    }

    /// Whether the current URL's auth_key or token has expired (see ``RTMPOutput/isURLExpired``).
    var isURLExpired: @Sendable () -> Bool = { false } {
        didSet { for output in outputs { output.isURLExpired = isURLExpired } }
    }

    func start(source: UncheckedTransfer<any MediaSource>) {
        startedAt = monotonicMicroseconds()
        for output in outputs { output.start() }
        WorkerThread.start(name: "livepush.source") { self.runProducer(source.value) }
    }

    // MARK: - Commands

    func requestStop() {
        stopProducer()
        for output in outputs { output.requestStop() }
    }

    func requestReconnect() {
        for output in outputs { output.requestReconnect() }
    }

    /// The URL of the first output for every later connect (a refreshed auth_key).
    func updateURL(_ newURL: PushURL) {
        outputs.first?.updateURL(newURL)
    }

    func setPaused(_ value: Bool) {
        lock.withLock {
            guard paused != value else { return }
            paused = value
            let now = monotonicMicroseconds()
            if value { pausedSince = now } else { pausedTotal += now - pausedSince }
            lock.broadcast()
        }
        for output in outputs { output.setPaused(value) }
    }

    /// The first output's figures with the source's; with several outputs, each one's too.
    func snapshot() -> PushStats {
        var stats = outputs.first?.snapshot() ?? PushStats()
        lock.withLock {
            stats.elapsed = .microseconds(monotonicMicroseconds() - startedAt)
            stats.loopsCompleted = loopsCompleted
        }
        stats.sourceDuration = info.duration
        if outputs.count > 1 { stats.outputs = outputs.map { $0.outputStats() } }
        if let recorder { (stats.recordedBytes, stats.recordingDrops) = recorder.figures }
        return stats
    }

    // MARK: - Output signals

    private func handle(_ outputSignal: RTMPOutput.Signal, from id: Int) {
        delivery.withLock {
            let decision = lock.withLock {
                let decision = outputStates.apply(outputSignal, from: id)
                lock.broadcast()  // the producer may wait for the first output to publish
                return decision
            }
            for index in decision.stop { outputs[index].requestStop() }
            if outputs.count > 1 {
                signal(.output(id: id, url: outputs[id].redactedURL, outputSignal))
            }
            for event in decision.forward {
                if case .connectFailed = event { stopProducer() }
                signal(.push(event))
            }
        }
    }

    private func stopProducer() {
        lock.withLock {
            stopRequested = true
            lock.broadcast()
        }
    }

    // MARK: - Producer

    /// How far ahead of the wall clock a real-time packet may be released (µs).
    static let pacingSlack: Int64 = 80_000

    private func runProducer(_ source: any MediaSource) {
        let ready = lock.withLock { () -> Bool in
            while !outputStates.canStartProducing && !stopRequested { lock.wait() }
            return !stopRequested && outputStates.anyPublishing
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
                    guard waitUntilDue(due), waitForRoom() else { return }
                    for output in outputs { output.push(stamped) }
                    recorder?.offer(stamped)
                }
                if case .times(let total) = config.looping, pass >= total { break }
                if lock.withLock({ stopRequested }) { return }
                try source.rewind()
                restamper.beginNextPass()
                pass += 1
                lock.withLock { loopsCompleted = pass - 1 }
            }
            lock.withLock { loopsCompleted = pass }
            for output in outputs { output.finishSource() }
        } catch {
            requestStop()
            signal(.sourceFailed(error))
        }
    }

    /// Waits while paused and, in real time, until `due` (wall clock less the time spent
    /// paused). False on stop. Senders are woken before the producer sleeps, so that each takes
    /// the batch queued since.
    private func waitUntilDue(_ due: Int64?) -> Bool {
        // One lock acquisition per packet when nothing needs waiting for (the common case).
        guard lock.withLock({ stopRequested || pendingWait(until: due) != nil }) else { return true }
        for output in outputs { output.wakeSender() }
        return lock.withLock {
            while !stopRequested, let wait = pendingWait(until: due) { lock.wait(timeout: wait) }
            return !stopRequested
        }
    }

    /// Called with the lock held: nil when the packet may go now, else how long to wait (nil
    /// inside: until woken).
    private func pendingWait(until due: Int64?) -> Duration?? {
        if paused { return .some(nil) }
        guard let due else { return nil }
        let left = due - (monotonicMicroseconds() - pausedTotal)
        return left > 0 ? .some(.microseconds(left)) : nil
    }

    /// Back-pressure (`--fast`): waits until the outputs that carry the push have room. While
    /// one output is connected, a disconnected one does not hold the others back (it drops by
    /// its queue's policy and resumes on a keyframe); while none is, all are waited for, so a
    /// single output loses nothing across a reconnect. False on stop.
    private func waitForRoom() -> Bool {
        guard config.pacing == .asFastAsPossible else { return true }
        while true {
            // One lock acquisition per output per packet: both facts are read together.
            let room = outputs.map(\.room)
            guard room.contains(where: \.isFull) else { return true }
            let anyConnected = room.contains(where: \.isConnected)
            guard let full = room.indices.first(where: { room[$0].isFull && (!anyConnected || room[$0].isConnected) }) else {
                return true
            }
            // Bounded, so that a change of which outputs are connected is seen.
            outputs[full].waitForRoom(timeout: .milliseconds(100))
            if lock.withLock({ stopRequested }) { return false }
        }
    }
}

/// Lets the outputs' signal closures reach their session without keeping it alive.
private final class WeakSession: @unchecked Sendable {
    weak var session: PushSession?
}

/// Hands a non-Sendable value to exactly one other thread. The sender gives up all use of it.
struct UncheckedTransfer<Value>: @unchecked Sendable {
    let value: Value
}
