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
        state = Mutex(EngineState(control: PushControl(outputKinds: urls.map(\.scheme), hasRenditions: renditions != nil)))
        var outputs: [PushOutput] = []
        let forward = WeakEngine()
        for (id, url) in urls.enumerated() {
            var announced = info
            if let rendition = renditions?.trackInfo(forOutput: id) { announced.video = rendition }
            if let opus, opus.outputs.contains(id) { announced.audio = opus.trackInfo }
            let output = PushOutput(id: id, config: config, url: url, info: announced) { outputSignal in
                forward.session?.receive(.output(id: id, outputSignal))
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

    // MARK: - The inbox

    func requestStop() { receive(.stop) }

    func requestReconnect() { receive(.reconnect) }

    /// The URL of the first output for every later connect (a refreshed auth_key).
    func updateURL(_ newURL: PushURL) { receive(.updateURL(newURL)) }

    /// Queues a command for the producer (see ``EngineCommand``): the one way a control
    /// reaches the push's media (a pause holds the outputs' queues once the producer takes it).
    func send(_ command: EngineCommand) { receive(.command(command)) }

    /// Everything from outside the producer comes here: ``PushControl`` decides it, under the
    /// engine's lock, one message at a time; then this does what it decided. An output's
    /// report also holds `delivery`, so the pusher hears the push's changes in the order they
    /// happened (an app's message tells the pusher nothing, and may come from its handlers).
    func receive(_ message: EngineMessage) {
        if case .output = message {
            delivery.withLock { _ in act(on: message) }
        } else {
            act(on: message)
        }
        wakeProducer()  // a command, a stop, or an output's change it may wait for
    }

    private func act(on message: EngineMessage) {
        let (actions, interrupt) = state.withLock { state in
            let actions = state.control.apply(message)
            return (actions, actions.stopsProducer ? state.interruptSource : nil)
        }
        if actions.stopsProducer {
            breakResolution?.abandon()
            interrupt?.interrupt()
        }
        for (id, order) in actions.outputs where outputs.indices.contains(id) {
            switch order {
            case .stop: outputs[id].requestStop()
            case .reconnect: outputs[id].requestReconnect()
            case .updateURL(let url): outputs[id].updateURL(url)
            case .updateWHIPToken(let token): outputs[id].updateWHIPToken(token)
            }
        }
        for report in actions.reports {
            switch report {
            case .push(let outputSignal): signal(.push(outputSignal))
            case .output(let id, let outputSignal): signal(.output(id: id, url: outputs[id].redactedURL, outputSignal))
            }
        }
        if !actions.producer.isEmpty { state.withLock { $0.commands.append(contentsOf: actions.producer) } }
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
