import Synchronization

/// One run of a push: a **producer** drives the push's ``Switcher`` (which reads the input on
/// air, stamps its packets onto the output clock and says when each is due) and hands each
/// packet to every output: the
/// ``PushOutput``s (one per destination, each with its own queue, connection and reconnect; the shared send loops write for all)
/// and the local ``FLVRecorder``. What the outputs report is folded by an
/// ``OutputSetStateMachine`` into what the push as a whole reports.
///
/// The producer meets each output only in that output's lock, so a slow or dead destination
/// never stalls the source beyond its own queue's policy, nor the other destinations.
final class PushEngine: @unchecked Sendable {
    /// What the session tells its ``LivePusher``; the pusher turns these into state and events.
    enum Signal: Sendable {
        /// The push as a whole, in an output's terms (with one output: what that output says).
        case push(PushOutput.Signal)
        /// Reading, decoding or encoding the source failed; the push ends.
        case sourceFailed(LivePushError)
        /// With several outputs: what output `id` reported, for the app to see per destination.
        case output(id: Int, url: String, PushOutput.Signal)
    }

    let config: PushConfig
    let info: StreamInfo
    let outputs: [PushOutput]
    /// The local recording beside the network outputs (`PushConfig.recordPath`).
    let recorder: FLVRecorder?
    let signal: @Sendable (Signal) -> Void
    /// What the producer plays instead of the input while paused with an image.
    let slate: UncheckedTransfer<any MediaInput>?
    /// What follows the first input (a playout timeline); nil: the input, looped as configured.
    let sequence: (any InputSequence)?
    /// Breaks signalled in the input (cues), and what fills them; nil: cues are not read.
    let breaks: BreakSetup?
    /// The outputs' own renditions, after the clock; nil: every output takes the push's video.
    let renditions: RenditionStage?
    /// The sound of the outputs that carry Opus (WHIP), after the clock; nil: every output takes the push's AAC.
    let opus: OpusStage?
    /// The raw-frame stages of the push's inputs: the producer's alone (changed by commands).
    let stages: FrameStages
    /// What they measured, for snapshots from any thread.
    let stageFigures: StageFigures
    let lock = ConditionLock()
    /// Outputs report from their own threads; folding a signal and passing on what it means
    /// happen under this lock, so the pusher hears the push's changes in the order they happened.
    private let delivery = ConditionLock()

    // Guarded by `lock`.
    var outputStates: OutputSetStateMachine
    var stopRequested = false
    /// Sent by the app's threads, taken by the producer (``EngineCommand``).
    var commands: [EngineCommand] = []
    var loopsCompleted = 0
    /// The output clock's sound end minus its pictures' end (µs), as the producer last saw it.
    var avOffset: Int64 = 0
    /// How late the producer has handed packets over, as it last reported.
    var lateness = PacingLateness()
    /// Set when the producer runs on the ``PacingScheduler``.
    var scheduledProducer: ScheduledProducer?
    /// Ends a producer thread's wait for an app-fed input.
    var interruptSource: (() -> Void)?
    private var startedAt: Int64 = 0

    init(config: PushConfig, urls: [PushURL], info: StreamInfo, stages: UncheckedTransfer<FrameStages>, recorder: FLVRecorder? = nil,
         slate: UncheckedTransfer<any MediaInput>? = nil, sequence: (any InputSequence)? = nil,
         breaks: BreakSetup? = nil, renditions: RenditionStage? = nil, opus: OpusStage? = nil,
         signal: @escaping @Sendable (Signal) -> Void) {
        self.config = config
        self.renditions = renditions
        self.opus = opus
        self.stages = stages.value
        stageFigures = stages.value.figures
        self.info = info
        self.recorder = recorder
        self.slate = slate
        self.sequence = sequence
        self.breaks = breaks
        // The recording is closed before the pusher hears that the push ended, so that the file
        // is complete when `stopped` arrives.
        self.signal = { event in
            switch event {
            case .push(.finished), .push(.connectFailed), .sourceFailed: recorder?.finish()
            default: break
            }
            signal(event)
        }
        outputStates = OutputSetStateMachine(count: urls.count,
                                             holdingTheStart: Set(urls.indices.filter { OutputNeeds(kind: urls[$0].scheme).holdsTheStart }))
        var outputs: [PushOutput] = []
        let forward = WeakEngine()
        for (id, url) in urls.enumerated() {
            var announced = info
            if let rendition = renditions?.trackInfo(forOutput: id) { announced.video = rendition }
            if let opus, opus.outputs.contains(id) { announced.audio = opus.trackInfo }
            outputs.append(PushOutput(id: id, config: config, url: url, info: announced) { outputSignal in
                forward.session?.handle(outputSignal, from: id)
            })
        }
        self.outputs = outputs
        forward.session = self
    }

    /// Whether the current URL's auth_key or token has expired (see ``PushOutput/isURLExpired``).
    var isURLExpired: @Sendable () -> Bool = { false } {
        didSet { for output in outputs { output.isURLExpired = isURLExpired } }
    }

    /// A live input's figures, for ``PushStats/input``; set once before `start`.
    var liveInputStats: (@Sendable () -> LiveInputStats)?

    func start(source: UncheckedTransfer<any MediaInput>) {
        startedAt = monotonicMicroseconds()
        // A file's breaks are resolved while the outputs connect; the producer starts when both are done.
        breaks?.director.resolveUpFront { [weak self] in self?.wakeWaitingProducer() }
        for output in outputs { output.start() }
        startProducer(source)
    }

    /// What a producer waits for is ready (the breaks' up-front answers, the next input of a
    /// sequence): on its own thread or on the ``PacingScheduler``, it goes on.
    func wakeWaitingProducer() {
        lock.withLock { lock.broadcast() }
        wakeProducer()
    }

    /// A producer on the ``PacingScheduler`` sleeps in its heap rather than in `lock`: what would
    /// wake a producer thread (a command, a stop, an output's change) wakes it there too.
    func wakeProducer() {
        if let job = lock.withLock({ scheduledProducer }) { PacingScheduler.shared.wake(job) }
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

    /// Queues a command for the producer (see ``EngineCommand``): the one way a control
    /// reaches the push's media (a pause holds the outputs' queues once the producer takes it).
    func send(_ command: EngineCommand) {
        lock.withLock {
            commands.append(command)
            lock.broadcast()
        }
        wakeProducer()
    }

    /// The first output's figures with the source's; with several outputs, each one's too.
    func snapshot() -> PushStats {
        var stats = outputs.first?.snapshot() ?? PushStats()
        lock.withLock {
            stats.elapsed = .microseconds(monotonicMicroseconds() - startedAt)
            stats.loopsCompleted = loopsCompleted
            stats.avOffset = avOffset
            stats.lateness = lateness
        }
        stats.sourceDuration = info.duration
        // One RTMP output's figures are the push's own; an SRT output has its link's besides.
        if outputs.count > 1 || outputs.contains(where: { $0.kind != .rtmp && $0.kind != .rtmps }) { stats.outputs = outputs.map { $0.outputStats() } }
        if let recorder { (stats.recordedBytes, stats.recordingDrops) = recorder.figures }
        if let figures = renditions?.figures {
            (stats.renditionFramesDecoded, stats.renditionFramesFromInput, stats.renditionPacketsSkipped, stats.renditions) = figures.snapshot()
        }
        stats.opusFramesEncoded = opus?.figures.framesEncoded ?? 0
        stats.pipeline = stageFigures.stats
        stats.input = liveInputStats?()
        return stats
    }

    // MARK: - Output signals

    private func handle(_ outputSignal: PushOutput.Signal, from id: Int) {
        delivery.withLock {
            let decision = lock.withLock {
                let decision = outputStates.apply(outputSignal, from: id)
                // An output's own rendition adapts to its network (the producer takes it next step).
                if renditions != nil, case .network(let change) = outputSignal {
                    commands.append(.outputNetwork(id: id, isPoor: change == .poor))
                }
                if case .keyframeRequested = outputSignal { commands.append(.keyframeRequested(output: id)) }
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
                // The push's network as a whole moves its encoder's adaptive bitrate; sent after
                // the event, so that `networkPoor` is heard before the change it causes.
                if case .network(let change) = event {
                    lock.withLock { commands.append(.networkChanged(isPoor: change == .poor)) }
                }
            }
        }
        wakeProducer()  // it may wait for the first output to publish
    }

    func stopProducer() {
        breaks?.director.abandon()
        let interrupt = lock.withLock {
            stopRequested = true
            lock.broadcast()
            return interruptSource
        }
        interrupt?()
        wakeProducer()
    }
}

/// Lets the outputs' signal closures reach their session without keeping it alive.
private final class WeakEngine: Sendable {
    private struct Reference {
        weak var session: PushEngine?
    }

    private let reference = Mutex(Reference())

    var session: PushEngine? {
        get { reference.withLock { $0.session } }
        set { reference.withLock { $0.session = newValue } }
    }
}

/// Hands a non-Sendable value to exactly one other thread. The sender gives up all use of it.
struct UncheckedTransfer<Value>: @unchecked Sendable {
    let value: Value
}
