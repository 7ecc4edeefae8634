import FoundationEssentials
import LivePushWire

/// How cues are written into the RTMP stream (AMF0 data messages, type 18).
public enum CueFormat: String, Sendable, Equatable, CaseIterable {
    /// `onAdCue` in SCTE-35 mode (Adobe Primetime, Azure Media Services): `{cue: base64
    /// splice_info_section, type: "scte35", id, duration, time}`.
    case adCue = "adcue"
    /// `onCuePoint`, Elemental/MediaLive style: `{name: "scte35", time, type: "event", parameters}`.
    case elemental
    /// YouTube's `onCuePoint` (`type: "com.youtube.cuepoint"`).
    case youtube
}
