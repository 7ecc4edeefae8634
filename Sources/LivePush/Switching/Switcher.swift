/// What goes on air, packet by packet: the push's switching core.
///
/// It reads the input on air, puts its packets on the ``OutputClock`` and says what to do with
/// each (``SwitchAction``): deliver it (with the sequence header and the cues it owes), wait
/// until it is due, wait for the outputs' room, or end. Switching is the one way the on-air
/// input changes: a loop switches to the same input again, the pause image switches to the
/// slate and back, a playout timeline (``InputSequence``) switches to its next entry, a break
/// switches to its fills and back to the main input. Each switch starts a clock segment, and
/// when the new input's codec configuration differs, a sequence header goes out before its
/// first frame of that track.
///
/// It knows nothing of outputs, locks or threads, and reads the time only from the
/// ``MonotonicClock`` it is given: its driver (``PushEngine``'s producer) does the I/O and
/// the waiting, and a unit test drives it with synthetic inputs and a clock moved by hand.
struct Switcher {
    /// What the switcher plays besides the input it starts with.
    struct Setup {
        var pacing: PushConfig.Pacing = .realTime
        var looping: PushConfig.Looping = .once
        /// What plays instead of the input while paused with an image.
        var slate: (any MediaInput)?
        /// What follows the first input (a playout timeline); nil: the input, looped as configured.
        var sequence: (any InputSequence)?
        /// Breaks signalled in the input (cues), and what fills them; nil: cues are not read.
        var breaks: BreakSetup?
        /// The configuration of the push's encode after the clock (``VideoEncodeStage``): what
        /// an input that yields raw pictures goes out with. Nil: the push has none; empty: not
        /// known until the encode opens for its first pictures (it fills the header it is sent).
        var pictureConfiguration: [UInt8]? = nil
        /// The AudioSpecificConfig of the push's sound encode after the clock
        /// (``AudioEncodeStage``): what an input that yields raw sound goes out with. Nil: the
        /// push has none.
        var soundConfiguration: [UInt8]? = nil
        /// The release batch of a real-time push (``PacingGate``).
        var pacingGate = PacingGate()
        /// Called (from any thread) when the input to go on air next (the sequence's next, a
        /// break's fill), opened ahead, is ready after ``SwitchAction/awaitingNextInput``: the
        /// driver steps again.
        var nextInputReady: @Sendable () -> Void = {}
    }

    let setup: Setup
    let timeSource: any MonotonicClock

    var input: any MediaInput
    /// While a break plays: the main input, read on underneath.
    var background: BreakBackground?
    /// A break that fell due while its first fill opens: the fills still to play, and the
    /// opening of the first.
    var breakOpening: (fills: [BreakFill], fill: OpeningInput)?
    /// A break's fill (its first, or the next) is still opening: nothing goes out until it is open.
    var awaitsFill = false
    /// Sound of the main input at or past the start of the next break, held until its
    /// pictures get there: it belongs to the break's time (or, if the break is passed over,
    /// goes out after all).
    var heldBack: [MediaPacket] = []
    /// The main input, while the slate plays.
    var suspended: (any MediaInput)?
    /// Packets of the input that went off air, stamped before the switch: sent first.
    var leftover: [MediaPacket] = []
    /// What an input produced past the switch point, by input: replayed when it is back.
    var held: [ObjectIdentifier: [MediaPacket]] = [:]
    /// The held packets of the input on air, taken before it is read again.
    var replay: [MediaPacket] = []
    /// Read and stamped by the switcher only (its extensions place cues and breaks with it).
    var clock: OutputClock
    /// The configuration each track was last sent with.
    var configuration: (video: [UInt8]?, audio: [UInt8]?)
    /// Sequence headers owed before the next frame of each track.
    var owedHeaders: (video: [UInt8]?, audio: [UInt8]?) = (nil, nil)
    /// Video before the first keyframe of a segment cannot be decoded by anyone.
    var awaitingKeyframe = true
    /// The pass over the input on air (a loop counts from 1).
    var pass = 1
    private(set) var pacing: PacingGate
    /// A skip was asked for: the input on air ends now.
    var skipping = false
    /// The input on air ended (or was skipped): the sequence's next one goes on air once it
    /// is open; the driver waits to be woken meanwhile.
    var awaitsNextInput = false
    /// Cues to send (ad breaks of a sequence), by when they are due.
    var cues: [AdCue] = []
    /// The next packet to deliver, once it is due and has room.
    private(set) var pending: Pending?
    private var finished = false

    /// A packet stamped and ready, waiting until it is due and there is room for it.
    struct Pending {
        var packet: MediaPacket
        /// A sequence header owed by the input the packet came from.
        var header: MediaPacket?
        /// Cues due by the packet go out before it (not for what an input left at a switch).
        var sendsCuesFirst: Bool
    }

    /// `input` goes on air from its start; `info` is what the outputs announced (its codec
    /// configurations are the ones already sent).
    init(input: any MediaInput, info: StreamInfo, setup: Setup, clock timeSource: any MonotonicClock) {
        self.setup = setup
        self.timeSource = timeSource
        self.input = input
        clock = OutputClock(info: info)
        configuration = (info.video?.decoderConfiguration, info.audio?.audioSpecificConfig)
        pacing = setup.pacingGate
        clock.beginSegment(start: input.start)
        if let sequence = setup.sequence { cues = sequence.cues(forInputStartingAt: 0) }
    }

    /// The main input is on air (not a break's fill, not the slate): its cues are read and
    /// its breaks start.
    var isMainOnAir: Bool { background == nil && suspended == nil }

    /// Passes completed over a looped input (all of them once the input ended).
    var loopsCompleted: Int { finished ? pass : pass - 1 }

    /// The output clock's sound end minus its pictures' end (µs).
    var avOffset: Int64 {
        clock.videoEnd > .min && clock.audioEnd > .min ? clock.audioEnd - clock.videoEnd : 0
    }

    /// Paused without an image: nothing goes until ``SwitchCommand/resume``.
    var isPaused: Bool { clock.isPaused }

    // MARK: Commands

    /// Acts on a command, between two packets.
    mutating func apply(_ command: SwitchCommand) throws(LivePushError) {
        switch command {
        case .pause: clock.pause(now: timeSource.now())
        case .resume: clock.resume(now: timeSource.now())
        case .showSlate:
            guard let slate = setup.slate, suspended == nil else { return }
            try takeOffAir()
            suspended = input
            switchTo(slate, fromStart: false)
        case .leaveSlate:
            guard let main = suspended else { return }
            try takeOffAir()
            suspended = nil
            switchTo(main, fromStart: false)
        case .skip:
            skipping = setup.sequence != nil && suspended == nil
        case .startBlackout(let duration):
            openBlackout(for: duration)
        case .endBlackout:
            endBreakNow()
        case .requestKeyframe:
            // A copied stream cannot: its next keyframe comes when the source has it.
            input.requestKeyframe(atOrAfter: .min)
        }
    }

    /// A command arrived (any, a filter change too): what is due may have moved, so the next
    /// packet starts a new release batch.
    mutating func commandsArrived() {
        pacing.startNewBatch()
    }

    /// Adaptive bitrate: the encoder of the input on air (the main one under a slate) takes
    /// `bitsPerSecond` at its next frame.
    func setVideoBitrate(_ bitsPerSecond: Int) {
        (suspended ?? input).setVideoBitrate(bitsPerSecond)
    }

    // MARK: Packets

    /// What to do next: deliver the pending packet once it is due (`real time`) and the
    /// outputs have room (`--fast`), or read on until a packet is pending. Never waits: it says
    /// what to wait for. `stopping` is asked before an input starts over (a loop);
    /// `hasRoom` only for a due packet of a `--fast` push.
    mutating func next(stopping: () -> Bool, hasRoom: () -> Bool) throws(LivePushError) -> SwitchAction {
        if let current = pending {
            if let wait = pendingWait(for: current.packet) { return .wait(until: wait) }
            if setup.pacing == .asFastAsPossible && !hasRoom() { return .waitForRoom }
            pending = nil
            var packet = current.packet
            if setup.pacing == .realTime { packet.due = pacing.lastDue }
            let dueCues = current.sendsCuesFirst ? takeCues(dueBy: packet.dts) : []
            return .deliver(packet, header: current.header, cues: dueCues)
        }
        guard try readUntilPending(stopping: stopping) else {
            if !finished { setup.sequence?.sequenceEnded(at: clock.end) }
            finished = true
            return .finished(cues: takeCues(dueBy: clock.end))
        }
        if pending != nil { return .again }
        return awaitsNextInput || awaitsFill ? .awaitingNextInput : .idle
    }

    /// Nil when the packet may go now, else until when to wait (nil inside: until a command).
    private mutating func pendingWait(for packet: MediaPacket) -> MediaTime?? {
        if clock.isPaused { return .some(nil) }
        guard setup.pacing == .realTime else { return nil }
        let now = timeSource.now()
        let anchors = !clock.isAnchored
        let due = clock.due(.microseconds(packet.dts), now: now)
        if anchors { setup.sequence?.outputStarted(at: packet.dts) }
        return pacing.wait(forPacketDue: due.microseconds, now: now.microseconds).map { .some(now + .microseconds($0)) }
    }

    /// The cues due by output time `time` (µs), in order.
    private mutating func takeCues(dueBy time: Int64) -> [AdCue] {
        let due = cues.prefix { $0.sendAt <= time }
        cues.removeFirst(due.count)
        return Array(due)
    }

    /// Adds cues to send, kept in the order they are due.
    mutating func schedule(_ more: [AdCue]) {
        cues += more
        cues.sort { $0.sendAt < $1.sendAt }
    }

    /// Stamps `packet` onto the output clock and makes it the next to deliver.
    mutating func makePending(_ packet: MediaPacket) {
        let stamped = clock.stamp(packet)
        // Owed by the input this packet came from (a switch while it waits is the next one's).
        pending = Pending(packet: stamped, header: takeOwedHeader(for: stamped), sendsCuesFirst: true)
    }

    /// What the input going off air left, stamped before the switch, goes first.
    mutating func makeLeftoverPending() {
        pending = Pending(packet: leftover.removeFirst(), header: nil, sendsCuesFirst: false)
    }

    var hasPending: Bool { pending != nil }

    private mutating func takeOwedHeader(for packet: MediaPacket) -> MediaPacket? {
        switch packet.kind {
        case .video:
            guard let configuration = owedHeaders.video else { return nil }
            owedHeaders.video = nil
            return .sequenceHeader(.video, configuration: configuration, at: packet.dts)
        case .audio:
            guard let configuration = owedHeaders.audio else { return nil }
            owedHeaders.audio = nil
            return .sequenceHeader(.audio, configuration: configuration, at: packet.dts)
        case .data, .cue:
            return nil
        }
    }

    /// Puts `next` on air from the next packet on: from its start (a new input, a loop), or
    /// from wherever it stands (`fromStart: false`: back from the slate).
    mutating func switchTo(_ next: any MediaInput, fromStart: Bool) {
        input = next
        replay = held.removeValue(forKey: ObjectIdentifier(next)) ?? []
        clock.beginSegment(start: fromStart ? next.start : nil)
        awaitingKeyframe = true
        let info = next.info
        // Raw pictures go out as the push's encode makes them.
        let video = info.video.flatMap { $0.pictureSettings == nil ? $0.decoderConfiguration : setup.pictureConfiguration }
        if let video, video != configuration.video {
            owedHeaders.video = video
            configuration.video = video
        }
        // Raw sound goes out as the push's sound encode makes it.
        let audio = info.audio.flatMap { $0.yieldsRawSound ? setup.soundConfiguration : $0.audioSpecificConfig }
        if let audio, audio != configuration.audio {
            owedHeaders.audio = audio
            configuration.audio = audio
        }
    }
}
