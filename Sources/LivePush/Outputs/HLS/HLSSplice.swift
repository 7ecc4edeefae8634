import LivePushWire

/// A splice an HLS output received (a playout break, a blackout, a source's passed-on
/// SCTE-35): where it falls on the output timeline, and the section to quote in the playlist.
struct HLSSplice: Sendable, Equatable {
    /// splice_event_id (of the splice_insert, else of the first segmentation descriptor).
    var eventID: UInt32
    /// True where a break starts, false at its return.
    var outOfNetwork: Bool
    /// Where the splice falls, µs of output time.
    var time: Int64
    /// The break's announced length, µs, when the cue says it.
    var duration: Int64?
    /// The splice_info_section as the segments' MPEG-TS carries it: its `pts_adjustment` holds
    /// the muxer's timestamp offset, so `splice_time + pts_adjustment` is the PTS of the
    /// segment's first picture, as for SRT.
    var section: [UInt8]

    init(eventID: UInt32, outOfNetwork: Bool, time: Int64, duration: Int64?, section: [UInt8]) {
        self.eventID = eventID
        self.outOfNetwork = outOfNetwork
        self.time = time
        self.duration = duration
        self.section = section
    }

    /// The splice a `.cue` packet's section announces, `arrival` being the packet's output
    /// time; nil for a section that does not parse, a cancel, or a command that splices
    /// nothing (splice_null, bandwidth reservation, private commands).
    init?(section bytes: [UInt8], arrival: Int64) {
        guard var section = try? SpliceInfoSection(parsing: bytes) else { return nil }
        switch section.command {
        case .insert(let insert) where insert.cancel: return nil
        case .insert, .timeSignal: break
        case .null, .other: return nil
        }
        let cue = SourceCue(section: section, arrival: arrival)
        TSMuxer.moveOntoTSTimeline(&section)
        self.init(eventID: cue.eventID ?? 0, outOfNetwork: cue.opensBreak, time: cue.spliceTime,
                  duration: cue.opensBreak ? cue.duration : nil, section: section.encoded())
    }

    /// The splice moved to output time `time`: a copied source had no keyframe at it, and the
    /// segment starts at the next one. The section says so too (its splice time, on the TS
    /// timeline as ever), so that a player placing the cue by it lands on the segment's start.
    func moved(to time: Int64) -> HLSSplice {
        var moved = self
        moved.time = time
        if let parsed = try? SpliceInfoSection(parsing: section) {
            var restamped = parsed.restamped(toTicks: AdCue.ticks(time))
            restamped.ptsAdjustment = TSClock.ticks90kHz(0)
            moved.section = restamped.encoded()
        }
        return moved
    }

    /// Whether `other` announces the same splice (a break known ahead is announced twice with
    /// the same splice_event_id: ahead, and at the splice).
    func isSameSplice(as other: HLSSplice) -> Bool {
        eventID == other.eventID && outOfNetwork == other.outOfNetwork && abs(time - other.time) <= Self.sameSpliceWindow
    }

    /// How far apart two announcements of one splice may place it (µs): the one ahead is
    /// placed from the schedule, the one at the splice where the pictures are.
    static let sameSpliceWindow: Int64 = 1_000_000
}
