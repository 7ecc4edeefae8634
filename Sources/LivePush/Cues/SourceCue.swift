import LivePushWire

/// A cue read from an input: one SCTE-35 `splice_info_section`, placed on the input's own
/// timeline (microseconds, the timeline its packets carry).
public struct SourceCue: Sendable, Equatable {
    /// The cue's `splice_info_section`, decoded.
    public var section: SpliceInfoSection
    /// Where the cue arrived in the input.
    public var arrival: Int64
    /// Where its splice happens: the section's splice time (plus `pts_adjustment`), or the
    /// arrival for an immediate splice and a command without a time.
    public var spliceTime: Int64

    /// Creates a cue from a section and where it arrived.
    public init(section: SpliceInfoSection, arrival: Int64) {
        self.section = section
        self.arrival = arrival
        spliceTime = section.spliceTicks.map { Self.inputTime(ofTicks: ($0 + section.ptsAdjustment) & SCTE35.ticksMask, near: arrival) }
            ?? arrival
    }

    /// Parses a section as an input carries it. Throws `cueInvalid` for a malformed section or
    /// a wrong CRC: the caller reports it and goes on.
    public init(bytes: [UInt8], arrival: Int64) throws(LivePushError) {
        do {
            self.init(section: try SpliceInfoSection(parsing: bytes), arrival: arrival)
        } catch {
            throw LivePushError(.cueInvalid, "SCTE-35 section at \(Double(arrival) / 1_000_000) s: \(error)")
        }
    }

    /// 90 kHz ticks wrap every 2^33 (about 26.5 h): the unwrapped time nearest the arrival.
    static func inputTime(ofTicks ticks: UInt64, near arrival: Int64) -> Int64 {
        let period = Int64((SCTE35.ticksMask + 1) * 1_000_000 / SCTE35.clockRate)
        let time = Int64(ticks * 1_000_000 / SCTE35.clockRate)
        let wraps = ((Double(arrival - time) / Double(period))).rounded()
        return time + Int64(wraps) * period
    }

    /// The cue on the output timeline (its input time through `mapping`), to pass on: the same
    /// section with its splice time moved onto the output and no `pts_adjustment`, sent at once.
    func passedOn(_ mapping: InputTimeMapping, sendAt: Int64) -> AdCue {
        var cue = AdCue(eventID: eventID ?? 0, outOfNetwork: opensBreak, spliceTime: mapping.outputTime(spliceTime),
                        duration: duration, sendAt: max(0, sendAt))
        cue.original = section
        return cue
    }

    /// The event id of its splice_insert, else of its first segmentation descriptor.
    public var eventID: UInt32? {
        if case .insert(let insert) = section.command { return insert.eventID }
        return segmentations.first?.eventID
    }

    /// Whether it starts something (out of network, or a segmentation start).
    public var opensBreak: Bool {
        if case .insert(let insert) = section.command { return insert.outOfNetwork }
        return segmentations.contains { !SCTE35SegmentationType.isEnd($0.typeID) }
    }

    /// The length it announces, µs.
    public var duration: Int64? {
        if case .insert(let insert) = section.command, insert.outOfNetwork, let ticks = insert.breakDuration {
            return Int64(ticks * 1_000_000 / SCTE35.clockRate)
        }
        return segmentations.compactMap(\.duration).first.map { Int64($0 * 1_000_000 / SCTE35.clockRate) }
    }

    var segmentations: [SegmentationDescriptor] {
        section.descriptors.compactMap { if case .segmentation(let s) = $0 { s } else { nil } }
    }
}

extension SpliceInfoSection {
    /// The splice time the command carries (90 kHz, before `pts_adjustment`); nil when immediate.
    var spliceTicks: UInt64? {
        switch command {
        case .insert(let insert): insert.spliceTime
        case .timeSignal(let time): time
        case .null, .other: nil
        }
    }

    /// The same section with its splice time at `ticks` and no `pts_adjustment`.
    func restamped(toTicks ticks: UInt64) -> SpliceInfoSection {
        var copy = self
        copy.ptsAdjustment = 0
        switch command {
        case .insert(var insert) where insert.spliceTime != nil:
            insert.spliceTime = ticks
            copy.command = .insert(insert)
        case .timeSignal(.some):
            copy.command = .timeSignal(ticks)
        default:
            break
        }
        return copy
    }
}
