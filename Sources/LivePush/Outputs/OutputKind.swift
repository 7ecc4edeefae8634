/// What an output speaks, from its URL: what it needs of the graph (``OutputNeeds``), where its
/// cues go, how its figures name it.
enum OutputKind: String, Sendable, Equatable {
    case rtmp, rtmps, srt, whip, hls

    init(_ url: PushURL) {
        if url.isHLS {
            self = .hls
            return
        }
        switch url.scheme {
        case .rtmp: self = .rtmp
        case .rtmps: self = .rtmps
        case .srt: self = .srt
        case .http, .https, .file: self = url.isWHIP ? .whip : .hls
        }
    }

    /// Whether cues go into the stream itself as SCTE-35 sections (`.cue` packets: MPEG-TS, and
    /// HLS's playlist tags), rather than as RTMP data messages.
    var carriesSpliceSections: Bool { self == .srt || self == .hls }

    /// Whether it carries a ladder of several video variants: HLS (a master playlist and a media
    /// playlist per variant), RTMP (Enhanced RTMP v2 multitrack: one track per variant, the
    /// first on track 0; a server that takes no multitrack gets track 0 only, with a warning).
    /// WHIP (simulcast, RFC 8853: one RID per variant, the first on top); SRT is refused (one program).
    var carriesLadder: Bool { self != .srt }

    /// Why a ladder of `count` renditions is refused on an output of this kind.
    var ladderRefusal: String {
        let name = switch self {
        case .rtmp, .rtmps: "RTMP"
        case .srt: "SRT"
        case .whip: "WHIP"
        case .hls: "HLS"
        }
        return "a ladder of several renditions goes to an HLS output (.m3u8: a master playlist, one variant each), "
            + "an RTMP output (Enhanced RTMP v2 multitrack, one track each) or a WHIP output (simulcast, one RID each); "
            + "an \(name) output carries one video"
    }
}
