/// The producer thread: reads the input that is on air, puts its packets on the
/// ``OutputClock``, paces them (real time) and hands each to every output.
///
/// Switching is the one way the on-air input changes: a loop switches to the same input
/// again, the pause image switches to the slate and back, a playout timeline
/// (``InputSequence``) switches to its next entry. Each switch starts a clock segment,
/// and when the new input's codec configuration differs, a sequence header goes out before
/// its first frame of that track.
extension PushSession {
    /// How far ahead of the wall clock a real-time packet may be released (µs): one wake-up
    /// per batch of this length. 40 ms keeps every stream within 50 ms of the wall clock (the
    /// channels benchmark: 80 ms let 200 channels stray 72 ms) for about one wake-up per frame.
    static let pacingSlack: Int64 = 40_000

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
        var batchEnd = Int64.min
        /// A skip was asked for: the input on air ends now.
        var skipping = false
        /// Cues to send (ad breaks of a sequence), by when they are due.
        var cues: [AdCue] = []

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

    func runProducer(_ source: any MediaSource) {
        let ready = lock.withLock { () -> Bool in
            while !outputStates.canStartProducing && !stopRequested { lock.wait() }
            return !stopRequested && outputStates.anyPublishing
        }
        guard ready else { return }
        var air = OnAir(input: source, clock: OutputClock(info: info),
                        configuration: (info.video?.decoderConfiguration, info.audio?.audioSpecificConfig))
        air.clock.beginSegment(start: source.start)
        if let sequence { air.cues = sequence.cues(forInputStartingAt: 0) }
        breaks?.director.prepare()
        do {
            while true {
                guard try applyCommands(&air) else { return }
                if !air.leftover.isEmpty {
                    let packet = air.leftover.removeFirst()
                    guard waitUntilDue(packet, &air), waitForRoom() else { return }
                    deliver(packet)
                    continue
                }
                if air.skipping {
                    air.skipping = false
                    try takeOffAir(&air)
                    sequence?.inputSkipped(unsent: air.held.removeValue(forKey: ObjectIdentifier(air.input)) ?? [])
                    guard let sequence, let next = sequence.nextInput() else { break }
                    putOnAir(next, from: sequence, &air)
                    continue
                }
                if air.background != nil {
                    guard try advanceBreak(&air) else { break }
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
                    guard air.suspended == nil else { continue }  // a slate that ends: hold on the input
                    if let sequence {
                        guard let next = sequence.nextInput() else { break }
                        putOnAir(next, from: sequence, &air)
                        continue
                    }
                    if case .times(let total) = config.looping, air.pass >= total { break }
                    if lock.withLock({ stopRequested }) { return }
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
                let header = takeOwedHeader(for: stamped, &air)
                guard waitUntilDue(stamped, &air), waitForRoom() else { return }
                deliverCues(dueBy: stamped.dts, &air)
                if let header { deliver(header) }
                deliver(stamped)
            }
            deliverCues(dueBy: air.clock.end, &air)
            lock.withLock { loopsCompleted = air.pass }
            for output in outputs { output.finishSource() }
        } catch {
            fail(error)
        }
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

    /// Sends the cues due by output time `time`, as data messages (``PushConfig/cueFormat``).
    func deliverCues(dueBy time: Int64, _ air: inout OnAir) {
        while let cue = air.cues.first, cue.sendAt <= time {
            air.cues.removeFirst()
            for output in outputs { output.push(.dataMessage(cue.message(config.cueFormat(forOutput: output.id)), at: cue.sendAt)) }
            recorder?.offer(.dataMessage(cue.message(config.cueFormat), at: cue.sendAt))
        }
    }

    func deliver(_ packet: MediaPacket) {
        for output in outputs { output.push(packet) }
        recorder?.offer(packet)
    }

    private func takeOwedHeader(for packet: MediaPacket, _ air: inout OnAir) -> MediaPacket? {
        switch packet.kind {
        case .video:
            guard let configuration = air.owedHeaders.video else { return nil }
            air.owedHeaders.video = nil
            return .sequenceHeader(.video, configuration: configuration, at: packet.dts)
        case .audio:
            guard let configuration = air.owedHeaders.audio else { return nil }
            air.owedHeaders.audio = nil
            return .sequenceHeader(.audio, configuration: configuration, at: packet.dts)
        case .data, .cue:
            return nil
        }
    }

    /// Takes the queued commands and acts on them; false on stop.
    private func applyCommands(_ air: inout OnAir) throws(LivePushError) -> Bool {
        let offset = air.clock.videoEnd > .min && air.clock.audioEnd > .min ? air.clock.audioEnd - air.clock.videoEnd : 0
        let (taken, stopped) = lock.withLock { () -> ([SessionCommand], Bool) in
            defer { commands.removeAll() }
            avOffset = offset
            return (commands, stopRequested)
        }
        guard !stopped else { return false }
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
            case .setBitrate(let bitrate):
                (air.suspended ?? air.input).setVideoBitrate(bitrate)
            case .startBlackout(let duration):
                openBlackout(for: duration, &air)
            case .endBlackout:
                endBreakNow(&air)
            }
        }
        return true
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

    /// Waits while paused and, in real time, until the packet is due on the clock. Commands
    /// that arrive meanwhile are applied (a pause moves the due time). False on stop. Senders
    /// are woken before the producer sleeps, so that each takes the batch queued since.
    private func waitUntilDue(_ packet: MediaPacket, _ air: inout OnAir) -> Bool {
        while let wait = pendingWait(for: packet, &air) {
            for output in outputs { output.wakeSender() }
            let interrupted = lock.withLock { () -> Bool in
                if commands.isEmpty && !stopRequested { _ = lock.wait(timeout: wait) }
                return !commands.isEmpty || stopRequested
            }
            if interrupted {
                do {
                    guard try applyCommands(&air) else { return false }
                } catch {
                    fail(error)
                    return false
                }
                air.batchEnd = .min
            }
        }
        return true
    }

    /// Nil when the packet may go now, else how long to wait (nil inside: until woken).
    private func pendingWait(for packet: MediaPacket, _ air: inout OnAir) -> Duration?? {
        if air.clock.isPaused { return .some(nil) }
        guard config.pacing == .realTime else { return nil }
        let now = monotonicMicroseconds()
        let due = air.clock.due(packet.dts, now: now)
        // Packets due within the pacing slack of one that had to wait go out with it: one
        // wake-up per batch instead of one per packet.
        if due <= air.batchEnd { return nil }
        air.batchEnd = due + Self.pacingSlack
        return due > now ? .some(.microseconds(due - now)) : nil
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
