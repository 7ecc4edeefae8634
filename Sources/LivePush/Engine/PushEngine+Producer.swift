/// The producer: the driver of the push's ``Switcher``. The switcher decides what goes on air,
/// packet by packet; the producer does what it says: hands each packet (its sequence header,
/// the cues due by it) to every output, the recording and the renditions, waits as told
/// (until a packet is due, for room, for a command), and applies the commands the app sent,
/// passing the switching ones on (pause, slate, skip, blackouts) and applying the others
/// itself (filters, the detector, adaptive bitrate).
extension PushEngine {
    /// What the producer needs before its next step (``step(_:)``); its driver does the waiting.
    enum Step {
        /// Step again at once.
        case again
        /// Step again at monotonic time `until`, or when a command arrives; nil: only when one arrives.
        case wait(until: MediaTime?)
        /// `--fast`: step again once this output's queue has room.
        case waitForRoom(PushOutput)
        /// The push is over (the input ended, it failed, or it was stopped).
        case finished
    }

    /// How long the producer waits, at most, while nothing is on air (a slate that ended).
    static let idleWait = MediaTime.milliseconds(10)
    /// How long the producer waits, at most, for the sequence's next input to open.
    static let nextInputWait = MediaTime.milliseconds(100)

    /// Puts the parts' source on air once the outputs allow it; nil when the push stopped first.
    func prepareProducer(_ parts: ProducerParts) -> ProducerState? {
        guard state.withLock({ !$0.stopRequested && $0.outputStates.anyPublishing }) else { return nil }
        let setup = Switcher.Setup(pacing: config.pacing, looping: config.looping, slate: parts.slate,
                                   sequence: sequence, breaks: parts.breaks,
                                   pictureConfiguration: parts.afterClock.videoEncode?.decoderConfiguration,
                                   soundConfiguration: parts.afterClock.audioEncode?.audioSpecificConfig,
                                   nextInputReady: { [weak self] in self?.wakeProducer() })
        let switcher = Switcher(input: parts.source, info: info, setup: setup, clock: config.monotonicClock)
        let reading = WallClockReading(wall: config.wallClock.nowMicroseconds, monotonic: config.monotonicClock.now())
        parts.breaks?.director.prepare(wallClock: reading)
        // A wall clock overlay shows the push's start plus the picture's media time.
        parts.stages.overlays.pushStarted(wallOrigin: reading.wall)
        return ProducerState(switcher: switcher, stages: parts.stages, afterClock: parts.afterClock)
    }

    /// Whether the producer may start: an output is publishing and a file's breaks are resolved
    /// up front (or the push stopped before).
    var canStartProducing: Bool {
        state.withLock { state in
            (state.outputStates.canStartProducing && (breakResolution?.upFrontSettled ?? true)) || state.stopRequested
        }
    }

    /// One step of the producer: applies the commands, then does what the switcher asks.
    /// Never blocks on time or on the outputs: it says what to wait for, and its driver (a
    /// thread of its own, or the shared ``PacingScheduler``) waits.
    func step(_ producer: inout ProducerState) -> Step {
        let stages = producer.stages
        do {
            guard try applyCommands(&producer, stages) else {
                stages.shutDown()
                return .finished
            }
            var full: PushOutput?
            let action = try producer.switcher.next(stopping: { state.withLock { $0.stopRequested } },
                                           hasRoom: { full = outputAwaitingRoom(); return full == nil })
            switch action {
            case .deliver(let packet, let header, let cues):
                // The driver wakes the senders once it is done stepping (``wakeSenders()``).
                deliverCues(cues, through: producer.afterClock)
                if let header { try deliver(header, through: producer.afterClock) }
                try deliver(packet, through: producer.afterClock)
                return .again
            case .again:
                return .again
            case .wait(let until):
                return .wait(until: until)
            case .waitForRoom:
                guard let full else { return .again }  // not reached: `hasRoom` said no, so it named the full output
                return .waitForRoom(full)
            case .idle:
                return .wait(until: config.monotonicClock.now() + Self.idleWait)
            case .awaitingNextInput:
                // Woken when it is open (bounded, should the wake come before a producer thread waits).
                return .wait(until: config.monotonicClock.now() + Self.nextInputWait)
            case .finished(let cues):
                deliverCues(cues, through: producer.afterClock)
                try finish(producer.afterClock)
                let loops = producer.switcher.loopsCompleted
                state.withLock { $0.loopsCompleted = loops }
                stages.shutDown()
                for output in outputs { output.finishSource() }
                return .finished
            }
        } catch {
            fail(error)
            stages.shutDown()
            return .finished
        }
    }

    /// The push ends with the source's error (``PushControl`` stops the outputs).
    private func fail(_ error: LivePushError) {
        receiveNeverRefused(.sourceFailed(error))
    }

    /// Takes the queued commands and acts on them; false on stop.
    private func applyCommands(_ producer: inout ProducerState, _ stages: FrameStages) throws(LivePushError) -> Bool {
        let renditions = producer.afterClock.renditions
        let (avOffset, lateness, loops) = (producer.switcher.avOffset, producer.switcher.pacing.lateness, producer.switcher.loopsCompleted)
        let (taken, stopped, wakeups) = state.withLock { state -> ([EngineCommand], Bool, Int) in
            defer { state.commands.removeAll() }
            state.avOffset = avOffset
            state.lateness = lateness
            state.loopsCompleted = loops
            return (state.commands, state.stopRequested, state.wakeups)
        }
        producer.wakeupsSeen = wakeups
        guard !stopped else { return false }
        // A command may move what is due (a pause): the next packet starts a new batch.
        if !taken.isEmpty { producer.switcher.commandsArrived() }
        let now = config.monotonicClock.now().microseconds
        for command in taken {
            if let switching = command.switchCommand {
                try producer.switcher.apply(switching)
                // The clock stopped (or runs again); what the outputs queued waits with it.
                if case .pause = command { for output in outputs { output.setPaused(true) } }
                if case .resume = command { for output in outputs { output.setPaused(false) } }
                continue
            }
            switch command {
            case .networkChanged(let isPoor):
                adaptBitrate(isPoor: isPoor, now: now, producer, stages)
            case .setFilters(let filters):
                stages.setFilters(filters)
            case .setDetector(let detector):
                stages.setDetector(detector)
            case .outputNetwork(let id, let isPoor):
                renditions?.networkChanged(output: id, isPoor: isPoor, now: now)
            case .keyframeRequested(let id):
                // Output `id`'s own encode takes it; else the input on air (a copied stream
                // cannot: its next keyframe comes when the source has it).
                if renditions?.requestKeyframe(forOutput: id) != true { try producer.switcher.apply(.requestKeyframe) }
            case .pause, .resume, .showSlate, .leaveSlate, .skip, .startBlackout, .endBlackout:
                break  // switching commands: applied above
            }
        }
        renditions?.tick(now: now)
        adaptBitrate(isPoor: nil, now: now, producer, stages)
        return true
    }

    /// Adaptive bitrate keeps stepping while the network stays poor (or recovered); the
    /// encoder of the input on air (the main one under a slate) and the push's encode after the
    /// clock take it at their next frame.
    private func adaptBitrate(isPoor: Bool?, now: Int64, _ producer: ProducerState, _ stages: FrameStages) {
        guard let bitrate = stages.adaptBitrate(isPoor: isPoor, now: now) else { return }
        producer.switcher.setVideoBitrate(bitrate)
        producer.afterClock.videoEncode?.setBitrate(bitrate)
    }
}
