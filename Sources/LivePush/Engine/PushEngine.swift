import Synchronization

/// One run of a push: a **producer** drives the push's ``Switcher`` (which reads the input on
/// air, stamps its packets onto the output clock and says when each is due) and hands each
/// packet to every output: the
/// ``PushOutput``s (one per destination, each with its own queue, connection and reconnect; the shared send loops write for all)
/// and the local ``FLVRecorder``. Everything else that reaches the push (the app's calls, the
/// outputs' signals) is decided by its ``PushControl``, which owns the push's state: the
/// engine emits the events it decides and tells its ``LivePusher`` when the push is over.
///
/// The producer meets each output only in that output's lock, so a slow or dead destination
/// never stalls the source beyond its own queue's policy, nor the other destinations.
final class PushEngine: Sendable {
    let config: PushConfig
    let info: StreamInfo
    let outputs: [PushOutput]
    /// The local recording beside the network outputs (`PushConfig.recordPath`).
    let recorder: FLVRecorder?
    /// Hands an event to the pusher's delegates and streams (it only queues them).
    let emit: @Sendable (PushEvent) -> Void
    /// Tells the pusher that the push is over (its recording closed); the pusher takes the
    /// final figures and ends it with ``close(finalStats:)``.
    let ended: @Sendable (PushEngine) -> Void
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

    /// `hasSlate`: a slate replaces the input while paused (the producer owns the slate itself).
    init(config: PushConfig, urls: [PushURL], info: StreamInfo, stageFigures: StageFigures, hasSlate: Bool,
         recorder: FLVRecorder? = nil, sequence: (any InputSequence)? = nil,
         breakResolution: BreakResolution? = nil, afterClock: StagesAfterClock = StagesAfterClock(),
         isURLExpired: @escaping @Sendable () -> Bool = { false },
         liveInputStats: (@Sendable () -> LiveInputStats)? = nil,
         emit: @escaping @Sendable (PushEvent) -> Void, ended: @escaping @Sendable (PushEngine) -> Void) {
        self.config = config
        let renditions = afterClock.renditions
        let opus = afterClock.opus
        renditionFigures = renditions?.figures
        opusFigures = opus?.figures
        self.stageFigures = stageFigures
        self.info = info
        self.recorder = recorder
        self.sequence = sequence
        self.breakResolution = breakResolution
        self.liveInputStats = liveInputStats
        self.emit = emit
        self.ended = ended
        state = Mutex(EngineState(control: PushControl(urls: urls, hasRenditions: renditions != nil, hasSlate: hasSlate)))
        var outputs: [PushOutput] = []
        let forward = WeakEngine()
        for (id, url) in urls.enumerated() {
            var announced = info
            if let renditions, case let ladder = renditions.ladder(forOutput: id), let first = ladder.first {
                if renditions.withPushVideo.contains(id), let own = info.video {
                    announced.variants = [own] + ladder
                } else {
                    announced.video = first
                    announced.variants = ladder.count > 1 ? ladder : []
                }
                if renditions.alternatives.contains(id) { announced.codecPreference = config.videoCodecPreference }
            }
            if let opus, opus.outputs.contains(id) { announced.audio = opus.trackInfo }
            let output = PushOutput(id: id, config: config, url: url, info: announced) { outputSignal in
                forward.session?.receiveNeverRefused(.output(id: id, outputSignal))
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

    /// Where the push is (``PushControl`` decides it).
    var pushState: PushState { state.withLock { $0.control.state } }

    /// Stops the push without asking whether it may (the pusher went away): a stop refused
    /// because the push is already ending or over has nothing left to do.
    func requestStop() { try? receive(.stop) }

    /// The URL of the first output for every later connect (a refreshed auth_key).
    func updateURL(_ newURL: PushURL) { receiveNeverRefused(.updateURL(newURL)) }

    /// Queues a command for the producer (see ``EngineCommand``): the one way a control
    /// reaches the push's media (a pause holds the outputs' queues once the producer takes it).
    func send(_ command: EngineCommand) { receiveNeverRefused(.command(command)) }

    /// A message that is never refused: only an app's start, pause, resume, stop and reconnect
    /// can be (``PushControl/apply(_:)`` throws for nothing else), so there is no error to drop.
    func receiveNeverRefused(_ message: EngineMessage) { try? receive(message) }

    /// Everything from outside the producer comes here: ``PushControl`` decides it, under the
    /// engine's lock, one message at a time, and the events it decides are emitted before that
    /// lock is let go, so the app hears them in the order the push's state changed, whichever
    /// threads raced (emitting only queues them: delegates run on the callback queue); the
    /// producer's commands are queued in that lock too. Then this does the rest: the outputs'
    /// orders, and the push's end. Throws `invalidState` for an app's call the
    /// push's state does not allow (nothing else is refused).
    func receive(_ message: EngineMessage) throws(LivePushError) {
        let (actions, interrupt) = try decide(message)
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
        wakeProducer()  // a command, a stop, or an output's change it may wait for
        if actions.endsPush {
            // The recording is closed before the pusher hears that the push ended, so that the
            // file is complete when `stopped` arrives.
            recorder?.finish()
            ended(self)
        }
    }

    /// The push's last message, from its pusher once it took the final figures: the final
    /// state and `stopped` are emitted. Returns what is emitted once the app's streams ended.
    func close(finalStats: PushStats) -> [PushEvent] {
        // Never refused (see ``receiveNeverRefused(_:)``).
        (try? decide(.close(finalStats: finalStats)))?.actions.afterStreamsEnd ?? []
    }

    private func decide(_ message: EngineMessage) throws(LivePushError) -> (actions: PushControl.Actions, interrupt: (any InterruptibleInput)?) {
        try state.withLock { (state: inout EngineState) throws(LivePushError) in
            let actions = try state.control.apply(message)
            for event in actions.events { emit(event) }
            // Queued in the same lock, so the producer takes commands in the order they were
            // decided (a pause and a resume from two threads), after the events they cause.
            state.commands.append(contentsOf: actions.producer)
            return (actions, actions.stopsProducer ? state.interruptSource : nil)
        }
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
        stats.loudness = stageFigures.loudness.stats
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
