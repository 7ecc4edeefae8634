import FoundationEssentials

/// The cue tags an HLS output puts before its segments, in the forms players read: pure, fed
/// the splices each segment starts at, in order.
///
/// | at | `cue-out` | `oatcls` | `daterange` |
/// |---|---|---|---|
/// | a break's start | `#EXT-X-CUE-OUT:DURATION=30.000` | `#EXT-OATCLS-SCTE35:<base64>` | `#EXT-X-DATERANGE:ID=…,START-DATE=…,PLANNED-DURATION=30.000,SCTE35-OUT=0x…` |
/// | each later segment of the break | `#EXT-X-CUE-OUT-CONT:ElapsedTime=4.000,Duration=30.000` | — | — |
/// | its return | `#EXT-X-CUE-IN` | `#EXT-OATCLS-SCTE35:<base64>` | `#EXT-X-DATERANGE:ID=…,START-DATE=…,END-DATE=…,DURATION=…,SCTE35-IN=0x…` |
///
/// The sections quoted are those the segments' MPEG-TS carries (``HLSSplice/section``). The
/// return's DATERANGE has the ID and START-DATE of the break it ends, as RFC 8216bis asks of
/// the tags of one date range.
struct HLSCueTags: Sendable {
    /// Which forms are written.
    struct Forms: OptionSet, Sendable {
        let rawValue: Int
        static let cueOut = Forms(rawValue: 1)
        static let oatcls = Forms(rawValue: 2)
        static let dateRange = Forms(rawValue: 4)
        static let all: Forms = [.cueOut, .oatcls, .dateRange]

        init(rawValue: Int) { self.rawValue = rawValue }

        /// The forms `format` names; every form for an RTMP format (an HLS output given none of its own).
        init(_ format: CueFormat) {
            switch format {
            case .cueOut: self = .cueOut
            case .oatcls: self = .oatcls
            case .dateRange: self = .dateRange
            case .hls, .adCue, .elemental, .youtube: self = .all
            }
        }
    }

    /// The break on air: the splice that opened it, where (output µs) and when (wall-clock µs).
    struct OpenBreak: Sendable, Equatable {
        var splice: HLSSplice
        var start: Int64
        var startDate: Int64
    }

    let forms: Forms
    private(set) var openBreak: OpenBreak?

    init(forms: Forms) {
        self.forms = forms
    }

    /// The tags of a segment that starts at output time `time` (wall-clock `date`, µs) at `splices`.
    mutating func tags(forSegmentAt time: Int64, date: Int64, splices: [HLSSplice]) -> [String] {
        var lines: [String] = []
        if splices.isEmpty, let open = openBreak, forms.contains(.cueOut) {
            var line = "#EXT-X-CUE-OUT-CONT:ElapsedTime=\(HLSMediaPlaylist.decimal(time - open.start))"
            if let duration = open.splice.duration { line += ",Duration=\(HLSMediaPlaylist.decimal(duration))" }
            lines.append(line)
        }
        for splice in splices {
            if splice.outOfNetwork {
                lines += outTags(splice, date: date)
                openBreak = OpenBreak(splice: splice, start: time, startDate: date)
            } else {
                lines += inTags(splice, date: date)
                openBreak = nil
            }
        }
        return lines
    }

    private func outTags(_ splice: HLSSplice, date: Int64) -> [String] {
        var lines: [String] = []
        if forms.contains(.cueOut) {
            lines.append("#EXT-X-CUE-OUT" + (splice.duration.map { ":DURATION=\(HLSMediaPlaylist.decimal($0))" } ?? ""))
        }
        if forms.contains(.oatcls) { lines.append("#EXT-OATCLS-SCTE35:\(Self.base64(splice.section))") }
        if forms.contains(.dateRange) {
            var line = "#EXT-X-DATERANGE:ID=\"\(Self.rangeID(splice))\",START-DATE=\"\(HLSMediaPlaylist.dateTime(date))\""
            if let duration = splice.duration { line += ",PLANNED-DURATION=\(HLSMediaPlaylist.decimal(duration))" }
            lines.append(line + ",SCTE35-OUT=\(Self.hex(splice.section))")
        }
        return lines
    }

    private func inTags(_ splice: HLSSplice, date: Int64) -> [String] {
        var lines: [String] = []
        if forms.contains(.cueOut) { lines.append("#EXT-X-CUE-IN") }
        if forms.contains(.oatcls) { lines.append("#EXT-OATCLS-SCTE35:\(Self.base64(splice.section))") }
        if forms.contains(.dateRange) {
            // The range the return ends: the open break's ID and start.
            let id = Self.rangeID(openBreak?.splice ?? splice)
            let start = openBreak?.startDate ?? date
            var line = "#EXT-X-DATERANGE:ID=\"\(id)\",START-DATE=\"\(HLSMediaPlaylist.dateTime(start))\""
            if openBreak != nil {
                line += ",END-DATE=\"\(HLSMediaPlaylist.dateTime(date))\",DURATION=\(HLSMediaPlaylist.decimal(date - start))"
            }
            lines.append(line + ",SCTE35-IN=\(Self.hex(splice.section))")
        }
        return lines
    }

    /// The DATERANGE ID of a splice's break: its splice_event_id.
    static func rangeID(_ splice: HLSSplice) -> String { "splice-\(splice.eventID)" }

    static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    /// An RFC 8216 hexadecimal-sequence: `0x` and two upper-case digits per byte.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var text: [UInt8] = Array("0x".utf8)
        text.reserveCapacity(2 + 2 * bytes.count)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
