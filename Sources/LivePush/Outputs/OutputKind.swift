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
}
