/// The HLS cue tags an HLS input reads, by the names `--subscribe` takes (the TVSDK's
/// `setSubscribedTags`: ``CueSubscription/hlsTags``).
public enum HLSTagFamily: String, Sendable, Equatable, Hashable, CaseIterable {
    /// `#EXT-OATCLS-SCTE35`: a base64 `splice_info_section`.
    case oatcls = "#EXT-OATCLS-SCTE35"
    /// `#EXT-X-CUE-OUT` and `#EXT-X-CUE-IN` (either name subscribes both).
    case cueOutIn = "#EXT-X-CUE-OUT"
    /// `#EXT-X-DATERANGE` with `SCTE35-OUT`, `SCTE35-IN` or `SCTE35-CMD`.
    case dateRange = "#EXT-X-DATERANGE"

    /// The family a `--subscribe` item names (without case), if it names one.
    public init?(tagName: some StringProtocol) {
        switch tagName.uppercased() {
        case "#EXT-OATCLS-SCTE35": self = .oatcls
        case "#EXT-X-CUE-OUT", "#EXT-X-CUE-IN": self = .cueOutIn
        case "#EXT-X-DATERANGE": self = .dateRange
        default: return nil
        }
    }
}
