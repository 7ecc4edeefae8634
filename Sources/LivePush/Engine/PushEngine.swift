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
final class PushEngine: Sendable {
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
    /// Whether a slate replaces the input while paused (the producer owns the slate itself).
    let hasSlate: Bool
    /// What follows the first input (a playout timeline); nil: the input, looped as configured.
    let sequence: (any InputSequence)?
    /// The content resolvers' side of the push's breaks (the up-front scan, a stop); the breaks
    /// themselves are the producer's (``ProducerParts/breaks``). Nil: cues are not read.
    let breakResolution: BreakResolution?
    /// What the stages after the clock (the producer's) measure.
    let renditionFigures: RenditionFigures?
    let opusFigures: OpusFigures?
    /// What the raw-frame stages measured, for snapshots from any thread (the stages are the producer's).
    let stageFigures: StageFigures
    /// A live input's figures, for ``PushStats/input``.
    let liveInputStats: (@Sendable () -> LiveInputStats)?
    /// Everything shared between the producer and the rest, in one place.
    let state: Mutex<EngineState>
    /// Where a producer thread sleeps between steps; ``wakeProducer()`` wakes it.
    let producerWake = ProgressSignal()
    /// Outputs report from their own threads; folding a signal and passing on what it means
    /// happen under this lock, so the pusher hears the push's changes in the order they happened.
    private let delivery = Mutex(())

    init(config: PushConfig, urls: [PushURL], info: StreamInfo, stageFigures: StageFigures, hasSlate: Bool,
         recorder: FLVRecorder? = nil, sequence: (any InputSequence)? = nil,
         breakResolution: BreakResolution? = nil, afterClock: StagesAfterClock = StagesAfterClock(),
         isURLExpired: @escaping @Sendable () -> Bool = { false },
         liveInputStats: (@Sendable () -> LiveInputStats)? = nil,
         signal: @escaping @Sendable (Signal) -> Void) {
        self.config = config
        let renditions = afterClock.renditions
        let opus = afterClock.opus
        renditionFigures = renditions?.figures
        opusFigures = opus?.figures
        self.stageFigures = stageFigures
        self.hasSlate = hasSlate
        self.info = info
        self.recorder = recorder
        self.sequence = sequence
        self.breakResolution = breakResolution
        self.liveInputStats = liveInputStats
        // The recording is closed before the pusher hears that the push ended, so that the file
        // is complete when `stopped` arrives.
        self.signal = { event in
            switch event {
            case .push(.finished), .push(.connectFailed), .sourceFailed: recorder?.finish()
            default: break
            }
            signal(event)
        }
        let outputStates = OutputSetStateMachine(count: urls.count,
                                                 holdingTheStart: Set(urls.indices.filter { OutputNeeds(kind: urls[$0].scheme).holdsTheStart }))
        state = Mutex(EngineState(outputStates: outputStates))
        var outputs: [PushOutput] = []
        let forward = WeakEngine()
        for (id, url) in urls.enumerated() {
            var announced = info
            if let rendition = renditions?.trackInfo(forOutput: id) { announced.video = rendition }
            if let opus, opus.outputs.contains(id) { announced.audio = opus.trackInfo }
            let output = PushOutput(id: id, config: config, url: url, info: announced) { outputSignal in
                forward.session?.handle(outputSignal, from: id)
            }
            output.isURLExpired = isURLExpired
            outputs.append(output)
        }
        self.outputs = outputs
        forward.session = self
    }

    /// Starts the outputs and hands the producer its parts.
    func start(_ parts: sending ProducerParts) {
        state.withLock { $0.startedAt = config.monotonicClock.now().microseconds }
        // A file's breaks are resolved while the outputs connect; the producer starts when both are done.
        breakResolution?.resolveUpFront { [weak self] in self?.wakeProducer() }
        for output in outputs { output.start() }
        startProducer(parts)
    }

    /// Something a producer may wait for happened (a command, a stop, an output's change, the
    /// breaks' up-front answers, the next input of a sequence opened): a producer thread
    /// looks again, and a producer on the ``PacingScheduler`` (which sleeps in its heap) runs.
    func wakeProducer() {
        let job = state.withLock { state in
            state.wakeups &+= 1
            return state.scheduledProducer
        }
        producerWake.wake()
        if let job { PacingScheduler.shared.wake(job) }
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
        state.withLock { $0.commands.append(command) }
        wakeProducer()
    }

    /// The first output's figures with the source's; with several outputs, each one's too.
    func snapshot() -> PushStats {
        var stats = outputs.first?.snapshot() ?? PushStats()
        state.withLock { state in
            stats.elapsed = .microseconds(config.monotonicClock.now().microseconds - state.startedAt)
            stats.loopsCompleted = state.loopsCompleted
            stats.avOffset = state.avOffset
            stats.lateness = state.lateness
        }
        stats.sourceDuration = info.duration
        // One RTMP output's figures are the push's own; an SRT output has its link's besides.
        if outputs.count > 1 || outputs.contains(where: { $0.kind != .rtmp && $0.kind != .rtmps }) { stats.outputs = outputs.map { $0.outputStats() } }
        if let recorder { (stats.recordedBytes, stats.recordingDrops) = recorder.figures }
        if let figures = renditionFigures {
            (stats.renditionFramesDecoded, stats.renditionFramesFromInput, stats.renditionPacketsSkipped, stats.renditions) = figures.snapshot()
        }
        stats.opusFramesEncoded = opusFigures?.framesEncoded ?? 0
        stats.pipeline = stageFigures.stats
        stats.input = liveInputStats?()
        return stats
    }

    // MARK: - Output signals

    private func handle(_ outputSignal: PushOutput.Signal, from id: Int) {
        delivery.withLock { _ in
            let decision = state.withLock { state in
                let decision = state.outputStates.apply(outputSignal, from: id)
                // An output's own rendition adapts to its network (the producer takes it next step).
                if renditionFigures != nil, case .network(let change) = outputSignal {
                    state.commands.append(.outputNetwork(id: id, isPoor: change == .poor))
                }
                if case .keyframeRequested = outputSignal { state.commands.append(.keyframeRequested(output: id)) }
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
                    state.withLock { $0.commands.append(.networkChanged(isPoor: change == .poor)) }
                }
            }
        }
        wakeProducer()  // it may wait for the first output to publish
    }

    func stopProducer() {
        breakResolution?.abandon()
        let interrupt = state.withLock { state in
            state.stopRequested = true
            return state.interruptSource
        }
        interrupt?.interrupt()
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
