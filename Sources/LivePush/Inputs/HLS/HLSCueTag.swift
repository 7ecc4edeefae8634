/// A cue tag of an HLS media playlist, as read (``HLSPlaylistParser``); ``HLSCueMapper`` turns
/// it into a SCTE-35 `splice_info_section` at its segment's media time.
enum HLSCueTag: Sendable, Equatable {
    /// `#EXT-OATCLS-SCTE35:<base64>`: a whole `splice_info_section` (the TVSDK's tag).
    case oatcls(base64: String)
    /// `#EXT-X-CUE-OUT`, `#EXT-X-CUE-OUT:<seconds>` or `#EXT-X-CUE-OUT:DURATION=<seconds>`.
    case cueOut(duration: Double?)
    /// `#EXT-X-CUE-IN`.
    case cueIn
    /// `#EXT-X-DATERANGE` carrying `SCTE35-OUT`, `SCTE35-IN` or `SCTE35-CMD` (hex, a whole
    /// `splice_info_section`); `PLANNED-DURATION` / `DURATION` when given.
    case dateRange(id: String, attribute: DateRangeSCTE35, hex: String, duration: Double?)

    /// Which SCTE-35 attribute of an `#EXT-X-DATERANGE` a tag carries.
    enum DateRangeSCTE35: String, Sendable, Equatable {
        case out = "SCTE35-OUT"
        case `in` = "SCTE35-IN"
        case cmd = "SCTE35-CMD"
    }

    var family: HLSTagFamily {
        switch self {
        case .oatcls: .oatcls
        case .cueOut, .cueIn: .cueOutIn
        case .dateRange: .dateRange
        }
    }
}
