import FoundationEssentials
import LivePushWire

/// Turns an HLS playlist's cue tags into SCTE-35 `splice_info_section`s, the form a TS input's
/// cues take, so that they go the same way from there: `.cue` packets, ``SourceCue``, the
/// subscription, the resolvers, the break director, blackouts and the alternate.
///
/// | tag | section |
/// |---|---|
/// | `#EXT-OATCLS-SCTE35:<base64>` | the section it carries |
/// | `#EXT-X-DATERANGE` `SCTE35-OUT` / `-IN` / `-CMD` | the section its hex carries |
/// | `#EXT-X-CUE-OUT[:DURATION=d]` | an immediate out-of-network `splice_insert` (with `break_duration` d and auto-return when given) |
/// | `#EXT-X-CUE-IN` | an immediate `splice_insert` back in, with the event id of the break open (however it opened), else a segmentation end of that segmentation event |
///
/// The splice happens at the media time of the segment the tag precedes: the input moves the
/// section's splice time there (``FailoverSlots``), whatever it said, since a playlist's tag
/// places its cue by its position. A tag whose payload does not decode becomes an empty
/// section, which the push refuses and reports (`cueRejected`) like a malformed cue in a TS.
/// Pure: the input keeps one per feed, since a `CUE-IN` closes what an earlier tag opened.
struct HLSCueMapper: Sendable {
    /// What an open break was opened by, for the `#EXT-X-CUE-IN` that closes it.
    private enum OpenBreak: Sendable, Equatable {
        case insert(eventID: UInt32)
        case segmentation(eventID: UInt32, typeID: UInt8)
    }

    /// The tag families read (``CueSubscription/hlsTags``).
    let families: Set<HLSTagFamily>
    /// Event ids of the sections made here: "HLS" and a count, apart from a feed's own small ones.
    private var nextEventID: UInt32 = 0x484C_5300
    private var open: OpenBreak?

    init(families: Set<HLSTagFamily> = Set(HLSTagFamily.allCases)) {
        self.families = families
    }

    /// The sections for one segment's tags, in order (the tags of unsubscribed families are
    /// left out).
    mutating func sections(for tags: [HLSCueTag]) -> [[UInt8]] {
        var sections: [[UInt8]] = []
        for tag in tags where families.contains(tag.family) {
            let bytes: [UInt8]
            switch tag {
            case .oatcls(let base64):
                bytes = Data(base64Encoded: base64).map(Array.init) ?? []
            case .dateRange(_, _, let hex, _):
                bytes = HLSAttributeList.hexBytes(hex) ?? []
            case .cueOut(let duration):
                let eventID = takeEventID()
                let ticks = duration.map { UInt64(($0 * Double(SCTE35.clockRate)).rounded()) }
                let insert = SpliceInsert(eventID: eventID, outOfNetwork: true, spliceTime: nil, breakDuration: ticks,
                                          autoReturn: ticks != nil)
                bytes = SpliceInfoSection(command: .insert(insert)).encoded()
            case .cueIn:
                bytes = returnSection()
            }
            note(bytes)
            sections.append(bytes)
        }
        return sections
    }

    private mutating func takeEventID() -> UInt32 {
        defer { nextEventID &+= 1 }
        return nextEventID
    }

    /// The section that closes the open break: its event id back in, or its segmentation end.
    private mutating func returnSection() -> [UInt8] {
        switch open {
        case .segmentation(let eventID, let typeID):
            // Each standard start type's end is the next type id (0x22/0x23, 0x34/0x35, 0x36/0x37...).
            let end = SegmentationDescriptor(eventID: eventID, typeID: typeID &+ 1)
            return SpliceInfoSection(command: .timeSignal(nil), descriptors: [.segmentation(end)]).encoded()
        case .insert(let eventID):
            return SpliceInfoSection(command: .insert(SpliceInsert(eventID: eventID, outOfNetwork: false, spliceTime: nil))).encoded()
        case nil:
            return SpliceInfoSection(command: .insert(SpliceInsert(eventID: takeEventID(), outOfNetwork: false, spliceTime: nil))).encoded()
        }
    }

    /// Remembers which break a section opens (or that it closed the one open).
    private mutating func note(_ bytes: [UInt8]) {
        // A playlist's section that does not parse opens or closes nothing here; the input
        // reports it (`cueRejected`) when it hands the cue over.
        guard let section = try? SpliceInfoSection(parsing: bytes) else { return }
        if case .insert(let insert) = section.command, !insert.cancel {
            open = insert.outOfNetwork ? .insert(eventID: insert.eventID) : nil
            return
        }
        for case .segmentation(let segmentation) in section.descriptors where !segmentation.cancel {
            if SCTE35SegmentationType.isEnd(segmentation.typeID) {
                open = nil
            } else {
                open = .segmentation(eventID: segmentation.eventID, typeID: segmentation.typeID)
            }
        }
    }
}
