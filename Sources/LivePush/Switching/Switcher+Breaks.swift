/// Breaks: the switcher switches from the main input to what fills a break (ads, alternate
/// content, the slate) and back. The switches are the ordinary ones (``OutputClock`` segments,
/// audio caught up to the pictures, sequence headers when the configuration changes).
extension Switcher {
    /// A cue of the input on air: read when that is the main input (and passed on, re-stamped).
    mutating func receiveCue(_ packet: MediaPacket) {
        guard let breaks = setup.breaks, isMainOnAir else { return }
        passOn(breaks.director.receive(packet, mapping: clock.mapping(placing: packet), now: clock.end))
    }

    private mutating func passOn(_ cue: AdCue?) {
        if let cue { schedule([cue]) }
    }

    /// A blackout from the main input's next picture (a command).
    mutating func openBlackout(for duration: Duration?) {
        guard let breaks = setup.breaks, isMainOnAir, breakOpening == nil else { return }
        breaks.director.openBlackout(at: clock.end, duration: duration.map { $0.nanoseconds / 1000 })
    }

    /// The break on air ends where the main input now stands (a command).
    mutating func endBreakNow() {
        guard let breaks = setup.breaks, background != nil || breakOpening != nil else { return }
        breaks.director.closeActive(at: clock.end, onAir: background != nil)
    }

    /// A break no cue of the input announced (a command, a window) is announced by the push.
    private mutating func announce(_ opportunity: PlacementOpportunity?, out: Bool) {
        guard let opportunity, opportunity.cue == nil else { return }
        passOn(AdCue(eventID: opportunity.id, outOfNetwork: out, spliceTime: clock.end,
                     duration: out ? opportunity.duration : nil, sendAt: clock.end))
    }

    /// Whether the main input's `packet` is sound from where the next break starts on: it waits
    /// for the pictures to get there (files interleave sound ahead of pictures), so that the
    /// break starts on both tracks at once.
    mutating func holdsBack(_ packet: MediaPacket) -> Bool {
        guard let breaks = setup.breaks, isMainOnAir, packet.kind == .audio, input.info.video != nil,
              let start = breaks.director.nextStart(on: clock), let mapping = clock.inputMapping,
              mapping.outputTime(packet.pts) >= start, heldBack.count < Self.catchUpLimit else { return false }
        heldBack.append(packet)
        return true
    }

    /// The pictures passed the held-back sound and no break started: it goes out now, before
    /// `packet` (true: the loop goes on with them).
    mutating func releasesHeldBack(before packet: MediaPacket) -> Bool {
        guard let first = heldBack.first, packet.kind == .video else { return false }
        if let start = setup.breaks?.director.nextStart(on: clock), let mapping = clock.inputMapping, mapping.outputTime(first.pts) >= start {
            return false
        }
        replay = heldBack + [packet] + replay
        heldBack = []
        return true
    }

    /// Whether `packet` is a fill's sound from where the break ends (the main input's return
    /// point once known, else the break's end) on: it waits for the fill's pictures to get
    /// there. Sound read ahead of the pictures (a file's interleaving, an encoder's delay)
    /// would otherwise end the break while the pictures are short of the return, and the main
    /// input would come back after a hole in the pictures as long as that lead.
    mutating func holdsFillSound(_ packet: MediaPacket) -> Bool {
        guard var onBreak = background, onBreak.filler != nil, packet.kind == .audio, input.info.video != nil,
              let end = returnTime(of: onBreak) ?? setup.breaks?.director.activeEnd, let mapping = clock.inputMapping,
              mapping.outputTime(packet.pts) >= end, onBreak.fillSound.count < Self.catchUpLimit else { return false }
        onBreak.fillSound.append(packet)
        background = onBreak
        return true
    }

    /// Where the main input comes back, output time, once its keyframe there was read.
    private func returnTime(of onBreak: BreakBackground) -> Int64? {
        onBreak.returnPoint.map { (onBreak.mapping ?? .identity).outputTime($0) }
    }

    /// The fill's held sound that lies before `time` (output time), in order; the rest stays.
    private mutating func takeFillSound(before time: Int64, from onBreak: inout BreakBackground) -> [MediaPacket] {
        guard !onBreak.fillSound.isEmpty, let mapping = clock.inputMapping else { return [] }
        let due = onBreak.fillSound.filter { mapping.outputTime($0.pts) < time }
        onBreak.fillSound.removeFirst(due.count)
        return due
    }

    /// Whether a break goes on air before the main input's `packet` (a picture, or sound without
    /// pictures), or waits for its first fill (true both: the loop goes on). A break that falls
    /// due starts opening its first fill on the opening pool, so that no pacing thread waits for
    /// a disk or a demuxer; until it is open nothing goes out (``awaitsFill``, the producer is
    /// woken once it is) and `packet` waits too. The output clock waits with it, so the splice is
    /// where the break's window says, to the frame, and the window keeps its length: only this
    /// push's packets are late by the opening (tens of milliseconds for a file).
    mutating func startsBreak(before packet: MediaPacket) throws(LivePushError) -> Bool {
        guard let breaks = setup.breaks, isMainOnAir, packet.kind == .video || input.info.video == nil else { return false }
        if breakOpening == nil, let plan = breaks.director.breakDue(by: clock.mapping(placing: packet).outputTime(packet.pts), on: clock),
           let first = plan.fills.first {
            breakOpening = (plan.fills, breaks.open(first))
        }
        while var opening = breakOpening {
            guard let result = opening.fill.take() else {
                replay.insert(packet, at: 0)
                awaitsFill = true
                return true
            }
            switch result {
            case .success(let fill):
                breakOpening = nil
                try startBreak(fills: opening.fills, with: fill, before: packet)
                return true
            case .failure(let error):
                breaks.report(error)
                let failed = opening.fills.removeFirst()
                if opening.fills.isEmpty && failed != .slate { opening.fills = [.slate] }
                guard let next = opening.fills.first, next != .main else {
                    // Nothing else fills it (the fallback is the main content): it is passed over.
                    breakOpening = nil
                    breaks.director.finishActive()
                    return false
                }
                opening.fill = breaks.open(next)
                breakOpening = opening
            }
        }
        return false
    }

    /// The main input goes off air before `packet` and the break's first fill, open, goes on.
    private mutating func startBreak(fills: [BreakFill], with fill: any MediaInput, before packet: MediaPacket) throws(LivePushError) {
        let mapping = clock.mapping(placing: packet)
        replay = [packet] + heldBack + replay
        heldBack = []
        try takeOffAir(cut: .min)  // the cut is before the picture in replay
        setup.breaks?.director.activeStarted(at: clock.end)
        if let sequence = setup.sequence, let opportunity = setup.breaks?.director.active, let first = fills.first {
            let source: String? = switch first {
            case .ad(let clip): clip.source
            case .alternate: setup.breaks?.director.options.alternate
            case .slate, .main: nil
            }
            sequence.breakStarted(opportunity, fill: first.name, source: source, at: clock.end)
        }
        let main = input
        background = BreakBackground(input: main, mapping: mapping, end: clock.end,
                                     queue: held.removeValue(forKey: ObjectIdentifier(main)) ?? [],
                                     fills: fills)
        putFillOnAir(fill)
        announce(setup.breaks?.director.active, out: true)
    }

    /// `fill`, open, goes on air (the first of the break's fills still to play), and the one
    /// after it starts opening, so that it is open when its turn comes.
    private mutating func putFillOnAir(_ fill: any MediaInput) {
        guard var onBreak = background, let breaks = setup.breaks else { return }
        onBreak.filler = fill
        // The last fill repeats until the break ends: the alternate's next pass opens ahead too
        // (the slate never ends, and the main content needs no opening).
        let after = onBreak.fills.count > 1 ? onBreak.fills[1] : onBreak.fills.first
        onBreak.opening = after.flatMap { $0 == .main || ($0 == .slate && onBreak.fills.count == 1) ? nil : breaks.open($0) }
        background = onBreak
        switchTo(fill, fromStart: true)
    }

    /// The fill on air ended: the next one goes on air; the last one (alternate, slate) starts
    /// again; the main content comes back when that is the fill.
    mutating func nextFill() {
        guard var onBreak = background else { return }
        // The fill that ended has no pictures left to wait for: its held sound goes out.
        leftover += onBreak.fillSound.map { clock.stamp($0) }
        onBreak.fillSound = []
        // The last fill repeats until the break ends (an alternate shorter than the break loops);
        // the others are done once they end.
        let repeating = onBreak.fills.count == 1 && onBreak.fills.first != .main
        if onBreak.filler != nil, !onBreak.fills.isEmpty, !repeating { onBreak.fills.removeFirst() }
        background = onBreak
        takeNextFill()
    }

    /// The next fill goes on air once it is open. Until then nothing goes out
    /// (``awaitsFill``: the producer is woken when it is open); it was opened while the fill
    /// before it played, so only an opening slower than that fill's length waits.
    mutating func takeNextFill() {
        guard var onBreak = background, let breaks = setup.breaks else {
            awaitsFill = false
            return
        }
        defer { background = onBreak }
        while let fill = onBreak.fills.first {
            if fill == .main {
                onBreak.returnNow = true
                onBreak.filler = nil
                awaitsFill = false
                return
            }
            let opening = onBreak.opening ?? breaks.open(fill)
            guard let result = opening.take() else {
                onBreak.opening = opening
                awaitsFill = true
                return
            }
            onBreak.opening = nil
            switch result {
            case .success(let input):
                awaitsFill = false
                background = onBreak
                putFillOnAir(input)
                onBreak = background ?? onBreak
                return
            case .failure(let error):
                breaks.report(error)
                let failed = onBreak.fills.removeFirst()
                if onBreak.fills.isEmpty && failed != .slate { onBreak.fills = [.slate] }
            }
        }
        // Nothing can fill the rest: the main input comes back on its next keyframe.
        onBreak.returnNow = true
        onBreak.filler = nil
        awaitsFill = false
    }

    /// While a fill opens (a break's first, or the next): whether it is open now; when not, the
    /// producer is woken (``Switcher/Setup/nextInputReady``) once it is.
    func fillIsReady() -> Bool {
        (breakOpening?.fill ?? background?.opening)?.isReady(whenReady: setup.nextInputReady) ?? true
    }

    /// Reads the main input underneath up to where the output stands, and ends the break when
    /// the output reaches the main input's return point. False when the main input ended with
    /// the break (the push is over).
    mutating func advanceBreak() throws(LivePushError) -> Bool {
        guard var underneath = background, let breaks = setup.breaks else { return true }
        let director = breaks.director
        while underneath.returnPoint == nil, !underneath.mainEnded {
            let packet: MediaPacket
            if !underneath.queue.isEmpty {
                packet = underneath.queue.removeFirst()
            } else if let next = try underneath.input.nextPacket() {
                packet = next
            } else if let sequence = setup.sequence {
                // A playout channel's timeline runs on underneath: its next entry follows, once
                // open (meanwhile the fill plays on, and the producer steps for it).
                guard sequence.nextInputIsReady(after: underneath.input, whenReady: setup.nextInputReady) else { break }
                guard let following = sequence.nextInput() else {
                    underneath.mainEnded = true
                    break
                }
                underneath.input = following
                underneath.mapping = nil
                continue
            } else {
                underneath.mainEnded = true
                break
            }
            let mapping = underneath.mapping ?? InputTimeMapping(placing: packet.pts, at: underneath.end)
            underneath.mapping = mapping
            if let end = director.activeEnd, underneath.keyframeAskedFor != end {
                // An encoding input makes a keyframe where the break ends, to come back exactly there.
                underneath.input.requestKeyframe(atOrAfter: mapping.inputTime(end))
                underneath.keyframeAskedFor = end
            }
            if packet.kind == .cue {
                passOn(director.receive(packet, mapping: mapping, now: clock.end))
                continue
            }
            if underneath.returnNow || director.activeEnd.map({ mapping.outputTime(packet.pts) >= $0 }) == true {
                // Past the break's end: the main input comes back on its next keyframe, with
                // its sound from there (files interleave sound ahead of the pictures).
                let opensPictures = packet.kind == .video ? packet.isKeyframe : underneath.input.info.video == nil
                if opensPictures {
                    underneath.returnPoint = packet.pts
                    let sound = underneath.pastEnd.filter { $0.pts + $0.duration / 2 > packet.pts }
                    underneath.queue.insert(contentsOf: [packet] + sound, at: 0)
                    underneath.pastEnd = []
                    break
                }
                if packet.kind == .audio {
                    underneath.pastEnd.append(packet)
                    if underneath.pastEnd.count > Self.catchUpLimit { underneath.pastEnd.removeFirst() }
                }
                continue
            }
            if mapping.outputTime(packet.pts) > clock.end {
                underneath.queue.insert(packet, at: 0)
                break
            }
            underneath.end = max(underneath.end, mapping.outputTime(packet.pts + packet.duration))
            // What the main input showed during the break: not sent.
        }
        let returnTime = returnTime(of: underneath)
        // A fill with pictures has reached the return when they have: its sound may be read
        // ahead of them (and waits from the return on, ``holdsFillSound(_:)``).
        let fillEnd = underneath.filler != nil && input.info.video != nil ? clock.videoEnd : clock.end
        let reachedReturn = returnTime.map { underneath.returnNow || fillEnd >= $0 } ?? false
        let reachedEnd = underneath.mainEnded
            && (underneath.returnNow || director.activeEnd.map { clock.end >= $0 } ?? true)
        guard reachedReturn || reachedEnd else {
            // The return point is known, later than the break's end: the fill's sound up to it
            // goes on (it was held from the break's end).
            if let returnTime { replay = takeFillSound(before: returnTime, from: &underneath) + replay }
            background = underneath
            return true
        }
        // The break is over: the fill goes off air, the main input comes back where it stands.
        let cut = returnTime ?? clock.end
        leftover += takeFillSound(before: cut, from: &underneath).map { clock.stamp($0) }
        if underneath.filler != nil || !underneath.returnNow {
            try takeOffAir(cut: cut)
        }
        held.removeValue(forKey: ObjectIdentifier(input))
        announce(director.active, out: false)
        director.finishActive()
        setup.sequence?.breakEnded(at: cut)
        background = nil
        awaitsFill = false
        guard !underneath.queue.isEmpty else { return !underneath.mainEnded }
        held[ObjectIdentifier(underneath.input)] = underneath.queue
        switchTo(underneath.input, fromStart: false)
        return true
    }
}
