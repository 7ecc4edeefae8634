/// What the producer needs to play breaks: the director that says when and with what, and a
/// way to open each fill (made by the pusher, which knows the push's format).
struct BreakSetup: @unchecked Sendable {
    let director: BreakDirector
    let open: (BreakFill) throws(LivePushError) -> any MediaSource
    /// Where a fill that cannot be opened is reported (the break goes on with the next fill).
    let report: @Sendable (LivePushError) -> Void
}

/// The main input while a break plays. It is read on underneath, in step with the output, as
/// a live feed would be: what it shows meanwhile is dropped, its cues are still read (the
/// break's end usually comes that way), and it comes back on its first keyframe at or after
/// the break's end.
struct BreakBackground {
    var input: any MediaSource
    /// How main input time maps onto the output, as when the break started (for a playout
    /// entry that starts underneath: fixed by its first packet, where the previous one ended).
    var mapping: InputTimeMapping?
    /// Where what was read underneath ends, output time.
    var end: Int64
    /// Read from the main input, not yet due.
    var queue: [MediaPacket]
    /// Sound past the break's end, read while looking for the keyframe to come back on.
    var pastEnd: [MediaPacket] = []
    /// Where the main input comes back (its keyframe at or after the break's end), once read.
    var returnPoint: Int64?
    /// Come back on the next keyframe, whenever it is (the fills ran out).
    var returnNow = false
    var mainEnded = false
    /// The break's end the main input was asked for a keyframe at.
    var keyframeAskedFor: Int64?
    /// What is still to play; the last one (alternate, slate) repeats until the break ends.
    var fills: [BreakFill]
    /// The fill on air, kept to loop it.
    var filler: (any MediaSource)?
}

/// Breaks: the producer switches from the main input to what fills a break (ads, alternate
/// content, the slate) and back. The switches are the ordinary ones (``OutputClock`` segments,
/// audio caught up to the pictures, sequence headers when the configuration changes).
extension PushSession {
    /// A cue of the input on air: read when that is the main input (and passed on, re-stamped).
    func receiveCue(_ packet: MediaPacket, _ air: inout OnAir) {
        guard let breaks, air.isMainOnAir else { return }
        passOn(breaks.director.receive(packet, mapping: air.clock.mapping(placing: packet), now: air.clock.end), &air)
    }

    private func passOn(_ cue: AdCue?, _ air: inout OnAir) {
        if let cue { air.schedule([cue]) }
    }

    /// The break to play before the main input's `packet`, if one starts there.
    func breakDue(before packet: MediaPacket, _ air: inout OnAir) -> BreakPlan? {
        guard let breaks, air.isMainOnAir, packet.kind == .video || air.input.info.video == nil else { return nil }
        return breaks.director.breakDue(by: air.clock.mapping(placing: packet).outputTime(packet.pts))
    }

    /// A blackout from the main input's next picture (a command).
    func openBlackout(for duration: Duration?, _ air: inout OnAir) {
        guard let breaks, air.isMainOnAir else { return }
        breaks.director.openBlackout(at: air.clock.end, duration: duration.map { $0.nanoseconds / 1000 })
    }

    /// The break on air ends where the main input now stands (a command).
    func endBreakNow(_ air: inout OnAir) {
        guard let breaks, air.background != nil else { return }
        breaks.director.closeActive(at: air.clock.end)
    }

    /// A break no cue of the input announced (a command, a window) is announced by the push.
    private func announce(_ opportunity: PlacementOpportunity?, out: Bool, _ air: inout OnAir) {
        guard let opportunity, opportunity.cue == nil else { return }
        passOn(AdCue(eventID: opportunity.id, outOfNetwork: out, spliceTime: air.clock.end,
                     duration: out ? opportunity.duration : nil, sendAt: air.clock.end), &air)
    }

    /// Whether the main input's `packet` is sound from where the next break starts on: it waits
    /// for the pictures to get there (files interleave sound ahead of pictures), so that the
    /// break starts on both tracks at once.
    func holdsBack(_ packet: MediaPacket, _ air: inout OnAir) -> Bool {
        guard let breaks, air.isMainOnAir, packet.kind == .audio, air.input.info.video != nil,
              let start = breaks.director.nextStart, let mapping = air.clock.inputMapping,
              mapping.outputTime(packet.pts) >= start, air.heldBack.count < Self.catchUpLimit else { return false }
        air.heldBack.append(packet)
        return true
    }

    /// The pictures passed the held-back sound and no break started: it goes out now, before
    /// `packet` (true: the loop goes on with them).
    func releasesHeldBack(before packet: MediaPacket, _ air: inout OnAir) -> Bool {
        guard let first = air.heldBack.first, packet.kind == .video else { return false }
        if let start = breaks?.director.nextStart, let mapping = air.clock.inputMapping, mapping.outputTime(first.pts) >= start {
            return false
        }
        air.replay = air.heldBack + [packet] + air.replay
        air.heldBack = []
        return true
    }

    /// The main input goes off air before `packet` and the break's first fill goes on.
    func startBreak(_ plan: BreakPlan, before packet: MediaPacket, _ air: inout OnAir) throws(LivePushError) {
        let mapping = air.clock.mapping(placing: packet)
        air.replay = [packet] + air.heldBack + air.replay
        air.heldBack = []
        try takeOffAir(&air, cut: .min)  // the cut is before the picture in air.replay
        breaks?.director.activeStarted(at: air.clock.end)
        let main = air.input
        air.background = BreakBackground(input: main, mapping: mapping, end: air.clock.end,
                                         queue: air.held.removeValue(forKey: ObjectIdentifier(main)) ?? [],
                                         fills: plan.fills)
        try nextFill(&air)
        announce(breaks?.director.active, out: true, &air)
    }

    /// The fill on air ended (or the break just started): the next one goes on air; the last
    /// one (alternate, slate) starts again; the main content comes back when that is the fill.
    func nextFill(_ air: inout OnAir) throws(LivePushError) {
        guard var background = air.background, let breaks else { return }
        defer { air.background = background }
        // The last fill repeats until the break ends (an alternate shorter than the break loops);
        // the others are done once they end.
        let repeating = background.fills.count == 1 && background.fills.first != .main
        if background.filler != nil, !background.fills.isEmpty, !repeating { background.fills.removeFirst() }
        while let fill = background.fills.first {
            if fill == .main {
                background.returnNow = true
                background.filler = nil
                return
            }
            do {
                let input = try breaks.open(fill)
                background.filler = input
                air.switchTo(input, fromStart: true)
                return
            } catch {
                breaks.report(error)
                background.fills.removeFirst()
                if background.fills.isEmpty { background.fills = [.slate] }
            }
        }
    }

    /// Reads the main input underneath up to where the output stands, and ends the break when
    /// the output reaches the main input's return point. False when the main input ended with
    /// the break (the push is over).
    func advanceBreak(_ air: inout OnAir) throws(LivePushError) -> Bool {
        guard var background = air.background, let breaks else { return true }
        let director = breaks.director
        while background.returnPoint == nil, !background.mainEnded {
            let packet: MediaPacket
            if !background.queue.isEmpty {
                packet = background.queue.removeFirst()
            } else if let next = try background.input.nextPacket() {
                packet = next
            } else if let sequence, let following = sequence.nextInput() {
                // A playout channel's timeline runs on underneath: its next entry follows.
                background.input = following
                background.mapping = nil
                continue
            } else {
                background.mainEnded = true
                break
            }
            let mapping = background.mapping ?? InputTimeMapping(placing: packet.pts, at: background.end)
            background.mapping = mapping
            if let end = director.activeEnd, background.keyframeAskedFor != end {
                // An encoding input makes a keyframe where the break ends, to come back exactly there.
                background.input.requestKeyframe(atOrAfter: mapping.inputTime(end))
                background.keyframeAskedFor = end
            }
            if packet.kind == .cue {
                passOn(director.receive(packet, mapping: mapping, now: air.clock.end), &air)
                continue
            }
            if background.returnNow || director.activeEnd.map({ mapping.outputTime(packet.pts) >= $0 }) == true {
                // Past the break's end: the main input comes back on its next keyframe, with
                // its sound from there (files interleave sound ahead of the pictures).
                let opensPictures = packet.kind == .video ? packet.isKeyframe : background.input.info.video == nil
                if opensPictures {
                    background.returnPoint = packet.pts
                    let sound = background.pastEnd.filter { $0.pts + $0.duration / 2 > packet.pts }
                    background.queue.insert(contentsOf: [packet] + sound, at: 0)
                    background.pastEnd = []
                    break
                }
                if packet.kind == .audio {
                    background.pastEnd.append(packet)
                    if background.pastEnd.count > Self.catchUpLimit { background.pastEnd.removeFirst() }
                }
                continue
            }
            if mapping.outputTime(packet.pts) > air.clock.end {
                background.queue.insert(packet, at: 0)
                break
            }
            background.end = max(background.end, mapping.outputTime(packet.pts + packet.duration))
            // What the main input showed during the break: not sent.
        }
        let returnTime = background.returnPoint.map { (background.mapping ?? .identity).outputTime($0) }
        let reachedReturn = returnTime.map { background.returnNow || air.clock.end >= $0 } ?? false
        let reachedEnd = background.mainEnded
            && (background.returnNow || director.activeEnd.map { air.clock.end >= $0 } ?? true)
        guard reachedReturn || reachedEnd else {
            air.background = background
            return true
        }
        // The break is over: the fill goes off air, the main input comes back where it stands.
        if background.filler != nil || !background.returnNow {
            try takeOffAir(&air, cut: returnTime ?? air.clock.end)
        }
        air.held.removeValue(forKey: ObjectIdentifier(air.input))
        announce(director.active, out: false, &air)
        director.finishActive()
        air.background = nil
        guard !background.queue.isEmpty else { return !background.mainEnded }
        air.held[ObjectIdentifier(background.input)] = background.queue
        air.switchTo(background.input, fromStart: false)
        return true
    }
}
