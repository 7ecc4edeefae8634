import FoundationEssentials
import LivePushWire

/// How cues are written: into an RTMP stream (AMF0 data messages, type 18) or into an HLS
/// output's playlist.
///
/// An HLS output writes its tags in the HLS form given for it, and all three (``hls``) when
/// it is given an RTMP form (as by default); an RTMP output given an HLS form writes ``adCue``.
public enum CueFormat: String, Sendable, Equatable, CaseIterable {
    /// `onAdCue` in SCTE-35 mode (Adobe Primetime, Azure Media Services): `{cue: base64
    /// splice_info_section, type: "scte35", id, duration, time}`.
    case adCue = "adcue"
    /// `onCuePoint`, Elemental/MediaLive style: `{name: "scte35", time, type: "event", parameters}`.
    case elemental
    /// YouTube's `onCuePoint` (`type: "com.youtube.cuepoint"`).
    case youtube
    /// HLS: `#EXT-X-CUE-OUT`, `#EXT-OATCLS-SCTE35` and `#EXT-X-DATERANGE`, all three.
    case hls
    /// HLS: `#EXT-X-CUE-OUT:DURATION=…`, `#EXT-X-CUE-OUT-CONT`, `#EXT-X-CUE-IN` only.
    case cueOut = "cue-out"
    /// HLS: `#EXT-OATCLS-SCTE35:<base64 splice_info_section>` only.
    case oatcls
    /// HLS: `#EXT-X-DATERANGE` with `SCTE35-OUT` / `SCTE35-IN` only (RFC 8216bis).
    case dateRange = "daterange"

    /// Whether this is one of the HLS playlist forms.
    public var isHLS: Bool {
        switch self {
        case .adCue, .elemental, .youtube: false
        case .hls, .cueOut, .oatcls, .dateRange: true
        }
    }
}
