/// The producer: reads the input that is on air, puts its packets on the
/// ``OutputClock``, paces them (real time) and hands each to every output.
///
/// Switching is the one way the on-air input changes: a loop switches to the same input
/// again, the pause image switches to the slate and back, a playout timeline
/// (``InputSequence``) switches to its next entry. Each switch starts a clock segment,
/// and when the new input's codec configuration differs, a sequence header goes out before
/// its first frame of that track.
extension PushSession {
    /// What the producer is doing: which input is on air and what the next packets need.
    struct OnAir {
        var input: any MediaSource
        /// While a break plays: the main input, read on underneath.
        var background: BreakBackground?
        /// Sound of the main input at or past the start of the next break, held until its
        /// pictures get there: it belongs to the break's time (or, if the break is passed over,
        /// goes out after all).
        var heldBack: [MediaPacket] = []
        /// The main input, while the slate plays.
        var suspended: (any MediaSource)?
        /// Packets of the input that went off air, stamped before the switch: sent first.
        var leftover: [MediaPacket] = []
        /// What an input produced past the switch point, by input: replayed when it is back.
        var held: [ObjectIdentifier: [MediaPacket]] = [:]
        /// The held packets of the input on air, taken before it is read again.
        var replay: [MediaPacket] = []
        var clock: OutputClock
        /// The configuration each track was last sent with.
        var configuration: (video: [UInt8]?, audio: [UInt8]?)
        /// Sequence headers owed before the next frame of each track.
        var owedHeaders: (video: [UInt8]?, audio: [UInt8]?) = (nil, nil)
        /// Video before the first keyframe of a segment cannot be decoded by anyone.
        var awaitingKeyframe = true
        var pass = 1
        var pacing = PacingGate()
        /// A skip was asked for: the input on air ends now.
        var skipping = false
        /// The input on air ended (or was skipped): the sequence's next one goes on air once it
        /// is open; the producer waits to be woken meanwhile.
        var awaitsNextInput = false
        /// Cues to send (ad breaks of a sequence), by when they are due.
        var cues: [AdCue] = []
        /// The next packet to deliver, once it is due and has room.
        var pending: Pending?

        /// The main input is on air (not a break's fill, not the slate): its cues are read and
        /// its breaks start.
        var isMainOnAir: Bool { background == nil && suspended == nil }

        /// Adds cues to send, kept in the order they are due.
        mutating func schedule(_ more: [AdCue]) {
            cues += more
            cues.sort { $0.sendAt < $1.sendAt }
        }

        /// Puts `next` on air from the next packet on: from its start (a new input, a loop), or
        /// from wherever it stands (`fromStart: false`: back from the slate).
        mutating func switchTo(_ next: any MediaSource, fromStart: Bool) {
            input = next
            replay = held.removeValue(forKey: ObjectIdentifier(next)) ?? []
            clock.beginSegment(start: fromStart ? next.start : nil)
            awaitingKeyframe = true
            let info = next.info
            if let video = info.video?.decoderConfiguration, video != configuration.video {
                owedHeaders.video = video
                configuration.video = video
            }
            if let audio = info.audio?.audioSpecificConfig, audio != configuration.audio {
                owedHeaders.audio = audio
                configuration.audio = audio
            }
        }
    }

    /// What the producer needs before its next step (``step(_:)``); its driver does the waiting.
    enum Step {
        /// Step again at once.
        case again
        /// Step again after `Duration`, or when a command arrives; nil: only when one arrives.
        case wait(Duration?)
        /// `--fast`: step again once this output's queue has room.
        case waitForRoom(PushOutput)
        /// The push is over (the input ended, it failed, or it was stopped).
        case finished
    }

    /// A packet stamped and ready, waiting until it is due and there is room for it.
    struct Pending {
        var packet: MediaPacket
        /// A sequence header owed by the input the packet came from.
        var header: MediaPacket?
        /// Cues due by the packet go out before it (not for what an input left at a switch).
        var sendsCuesFirst: Bool
    }

    /// Puts `source` on air once the outputs allow it; nil when the push stopped first.
    func prepareProducer(_ source: any MediaSource) -> OnAir? {
        guard lock.withLock({ !stopRequested && outputStates.anyPublishing }) else { return nil }
        var air = OnAir(input: source, clock: OutputClock(info: info),
                        configuration: (info.video?.decoderConfiguration, info.audio?.audioSpecificConfig))
        air.clock.beginSegment(start: source.start)
        if let sequence { air.cues = sequence.cues(forInputStartingAt: 0) }
        breaks?.director.prepare(wallClockOrigin: config.wallClock.nowMicroseconds)
        return air
    }

    /// Whether the producer may start: an output is publishing and a file's breaks are resolved
    /// up front (or the push stopped before). Called with `lock` held.
    var startsProducing: Bool {
        (outputStates.canStartProducing && (breaks?.director.upFrontSettled ?? true)) || stopRequested
    }

    /// ``startsProducing``, taking `lock`.
    var canStartProducing: Bool { lock.withLock { startsProducing } }

    /// One step of the producer: delivers the pending packet once it is due and has room, or
    /// reads on until the next packet is pending. Never blocks on time or on the outputs: it
    /// says what to wait for, and its driver (a thread of its own, or the shared
    /// ``PacingScheduler``) waits.
    func step(_ air: inout OnAir) -> Step {
        do {
            guard try applyCommands(&air) else {
                stages.shutDown()
                return .finished
            }
            if let pending = air.pending {
                // The driver wakes the senders once it is done stepping (``wakeSenders()``).
                if let wait = pendingWait(for: pending.packet, &air) { return .wait(wait) }
                if let full = outputAwaitingRoom() { return .waitForRoom(full) }
                air.pending = nil
                if pending.sendsCuesFirst { deliverCues(dueBy: pending.packet.dts, &air) }
                if let header = pending.header { try deliver(header) }
                var packet = pending.packet
                if config.pacing == .realTime { packet.due = air.pacing.lastDue }
                try deliver(packet)
                return .again
            }
            guard try readUntilPending(&air) else {
                deliverCues(dueBy: air.clock.end, &air)
                try finishStages()
                lock.withLock { loopsCompleted = air.pass }
                stages.shutDown()
                for output in outputs { output.finishSource() }
                return .finished
            }
            // Waiting for the next input to open: woken when it is (bounded, should the wake come
            // before a producer thread waits).
            if air.awaitsNextInput { return .wait(.milliseconds(100)) }
            return air.pending == nil ? .wait(.milliseconds(10)) : .again
        } catch {
            fail(error)
            stages.shutDown()
            return .finished
        }
    }

    /// Reads the input on air (switching, looping, starting and ending breaks) until a packet
    /// is pending (or a slate has ended). False when the input is over, or the push was stopped.
    private func readUntilPending(_ air: inout OnAir) throws(LivePushError) -> Bool {
        while air.pending == nil {
            if !air.leftover.isEmpty {
                air.pending = Pending(packet: air.leftover.removeFirst(), header: nil, sendsCuesFirst: false)
                return true
            }
            if air.awaitsNextInput, let sequence {
                // Opened ahead on another thread: this one does not wait for it.
                guard sequence.nextInputIsReady(whenReady: { [weak self] in self?.wakeWaitingProducer() }) else { return true }
                air.awaitsNextInput = false
                guard let next = sequence.nextInput() else { return false }
                putOnAir(next, from: sequence, &air)
                continue
            }
            if air.skipping {
                air.skipping = false
                try takeOffAir(&air)
                guard let sequence else { return false }
                sequence.inputSkipped(unsent: air.held.removeValue(forKey: ObjectIdentifier(air.input)) ?? [])
                air.awaitsNextInput = true
                continue
            }
            if air.background != nil {
                guard try advanceBreak(&air) else { return false }
                if air.background == nil { continue }
            }
            guard let packet = try nextPacket(&air) else {
                if !air.heldBack.isEmpty {
                    air.replay = air.heldBack
                    air.heldBack = []
                    continue
                }
                if air.background != nil {
                    try nextFill(&air)
                    continue
                }
                // A slate that ends: hold on the input until a command takes it off air.
                if air.suspended != nil { return true }
                if sequence != nil {
                    air.awaitsNextInput = true
                    continue
                }
                if case .times(let total) = config.looping, air.pass >= total { return false }
                if lock.withLock({ stopRequested }) { return false }
                try air.input.rewind()
                air.switchTo(air.input, fromStart: true)
                air.pass += 1
                lock.withLock { loopsCompleted = air.pass - 1 }
                continue
            }
            if packet.kind == .cue {
                receiveCue(packet, &air)
                continue
            }
            if holdsBack(packet, &air) { continue }
            if let plan = breakDue(before: packet, &air) {
                try startBreak(plan, before: packet, &air)
                continue
            }
            if releasesHeldBack(before: packet, &air) { continue }
            if packet.kind == .video && air.awaitingKeyframe {
                guard packet.isKeyframe else { continue }
                air.awaitingKeyframe = false
            }
            guard air.clock.admits(packet) else { continue }
            let stamped = air.clock.stamp(packet)
            // Owed by the input this packet came from (a switch while it waits is the next one's).
            air.pending = Pending(packet: stamped, header: takeOwedHeader(for: stamped, &air), sendsCuesFirst: true)
        }
        return true
    }

    private func fail(_ error: LivePushError) {
        requestStop()
        signal(.sourceFailed(error))
    }

    /// The next packet of the input on air (what it held first). When it fails mid-way and a
    /// sequence plays, what the sequence puts in its place goes on air instead.
    private func nextPacket(_ air: inout OnAir) throws(LivePushError) -> MediaPacket? {
        if !air.replay.isEmpty { return air.replay.removeFirst() }
        do {
            return try air.input.nextPacket()
        } catch {
            guard let sequence, let standIn = sequence.inputFailed(error) else { throw error }
            air.switchTo(standIn, fromStart: true)
            return try nextPacket(&air)
        }
    }

    /// The sequence's next input goes on air; it says which cues belong to its start.
    private func putOnAir(_ next: any MediaSource, from sequence: any InputSequence, _ air: inout OnAir) {
        air.switchTo(next, fromStart: true)
        FreedMemory.releaseSoon()  // the entry that went off air held a decoder and an encoder
        // The new segment starts where the output ends: that is the splice.
        air.schedule(sequence.cues(forInputStartingAt: air.clock.end))
    }

    /// Takes the queued commands and acts on them; false on stop.
    private func applyCommands(_ air: inout OnAir) throws(LivePushError) -> Bool {
        let offset = air.clock.videoEnd > .min && air.clock.audioEnd > .min ? air.clock.audioEnd - air.clock.videoEnd : 0
        let (taken, stopped) = lock.withLock { () -> ([SessionCommand], Bool) in
            defer { commands.removeAll() }
            avOffset = offset
            lateness = air.pacing.lateness
            return (commands, stopRequested)
        }
        guard !stopped else { return false }
        // A command may move what is due (a pause): the next packet starts a new batch.
        if !taken.isEmpty { air.pacing.startNewBatch() }
        let now = monotonicMicroseconds()
        for command in taken {
            switch command {
            case .pause: air.clock.pause(now: now)
            case .resume: air.clock.resume(now: now)
            case .showSlate:
                guard let slate = slate?.value, air.suspended == nil else { continue }
                try takeOffAir(&air)
                air.suspended = air.input
                air.switchTo(slate, fromStart: false)
            case .leaveSlate:
                guard let main = air.suspended else { continue }
                try takeOffAir(&air)
                air.suspended = nil
                air.switchTo(main, fromStart: false)
            case .skip:
                air.skipping = sequence != nil && air.suspended == nil
            case .networkChanged(let isPoor):
                adaptBitrate(isPoor: isPoor, now: now, &air)
            case .setFilters(let filters):
                stages.setFilters(filters)
            case .setDetector(let detector):
                stages.setDetector(detector)
            case .startBlackout(let duration):
                openBlackout(for: duration, &air)
            case .endBlackout:
                endBreakNow(&air)
            case .outputNetwork(let id, let isPoor):
                renditions?.networkChanged(output: id, isPoor: isPoor, now: now)
            case .keyframeRequested(let id):
                // A copied stream cannot: its next keyframe comes when the source has it.
                if renditions?.requestKeyframe(forOutput: id) != true { air.input.requestKeyframe(atOrAfter: .min) }
            }
        }
        renditions?.tick(now: now)
        adaptBitrate(isPoor: nil, now: now, &air)
        return true
    }

    /// Adaptive bitrate keeps stepping while the network stays poor (or recovered); the
    /// encoder of the input on air (the main one under a slate) takes it at its next frame.
    private func adaptBitrate(isPoor: Bool?, now: Int64, _ air: inout OnAir) {
        guard let bitrate = stages.adaptBitrate(isPoor: isPoor, now: now) else { return }
        (air.suspended ?? air.input).setVideoBitrate(bitrate)
    }

    /// Packets an input may produce while its audio catches up with its pictures at a switch.
    static let catchUpLimit = 500

    /// The input on air gives up what it already took; it is stamped now, on its own segment.
    /// Then, when its audio ends short of its pictures (demuxing order, encoder delay), it is
    /// read on until the audio reaches where the pictures end: the next input then starts on
    /// both tracks at once, with no hole in the sound. What it produces beyond that point is
    /// held for when it is on air again.
    ///
    /// `cut` (a break's start or end, output time): what the input gives up is sent up to its
    /// first picture (in decode order) that shows at or after the cut; the pictures from there
    /// on are held (a B-frame after it would lack its reference), and so is the sound from
    /// where the pictures stop.
    func takeOffAir(_ air: inout OnAir, cut: Int64? = nil) throws(LivePushError) {
        var held = air.replay
        air.replay = []
        var pastCut = false
        for packet in try air.input.suspend() {
            if let cut, packet.kind == .video, !pastCut {
                pastCut = air.clock.presentationTime(of: packet).map { $0 >= cut } ?? true
            }
            let soundPastPictures = packet.kind == .audio && (air.clock.presentationTime(of: packet).map { $0 >= air.clock.videoEnd } ?? true)
            if cut != nil && (pastCut || soundPastPictures) { held.append(packet) } else { leave(packet, &air) }
        }
        let audioFrame = Int64(1024 * 1_000_000 / max(1, air.input.info.audio?.sampleRate ?? 44_100))
        var pulls = 0
        while air.input.info.video != nil && air.input.info.audio != nil,
              air.clock.audioEnd + audioFrame <= air.clock.videoEnd, pulls < Self.catchUpLimit,
              let packet = try air.input.nextPacket() {
            pulls += 1
            if packet.kind == .audio, let time = air.clock.presentationTime(of: packet), time < air.clock.videoEnd {
                leave(packet, &air)
            } else {
                held.append(packet)
                // Sound reached where the pictures end (what is short of it was held back).
                if packet.kind == .audio { break }
            }
        }
        air.held[ObjectIdentifier(air.input)] = held
    }

    /// Stamps a packet of the input going off air, for sending before the switch.
    private func leave(_ packet: MediaPacket, _ air: inout OnAir) {
        if packet.kind == .cue {
            receiveCue(packet, &air)
            return
        }
        if packet.kind == .video && air.awaitingKeyframe && !packet.isKeyframe { return }
        air.leftover.append(air.clock.stamp(packet))
    }
}
