import LivePushWire

/// The video codecs a push can send. H.264 goes as legacy FLV (every RTMP server takes it);
/// the others need Enhanced RTMP (a FourCC in the video tag header) or an SRT output.
public enum VideoCodec: String, Sendable, CaseIterable, Codable {
    /// H.264 (AVC): legacy FLV.
    case h264
    /// HEVC (H.265): Enhanced RTMP or SRT.
    case hevc
    /// AV1: Enhanced RTMP.
    case av1
    /// VP9: Enhanced RTMP, copied only.
    case vp9

    /// The Enhanced RTMP codec, nil for H.264 (legacy FLV).
    public var enhancedRTMP: FLVExVideoCodec? {
        switch self {
        case .h264: nil
        case .hevc: .hevc
        case .av1: .av1
        case .vp9: .vp9
        }
    }

    /// What the metadata's `videocodecid` says: 7 (AVC), or the FourCC as a number (E-RTMP).
    var metadataCodecID: Double {
        enhancedRTMP.map { Double($0.rawValue) } ?? 7
    }
}

/// What `--video-codec` asks for: one codec to encode to, or the source's own, sent as it is.
public enum VideoCodecChoice: Sendable, Equatable {
    /// Encode to this codec.
    case encode(VideoCodec)
    /// The source's video as it is, when it is H.264, HEVC, AV1 or VP9 (re-encoded to H.264
    /// otherwise, or when a stage needs its pictures).
    case copy

    /// Parses `--video-codec`'s value (`h264`, `hevc`, `h265`, `av1`, `vp9`, `copy`); nil for anything else.
    public init?(_ text: String) {
        if text.lowercased() == "copy" {
            self = .copy
        } else if let codec = VideoCodec(rawValue: text.lowercased()) {
            self = .encode(codec)
        } else if ["h265", "x265"].contains(text.lowercased()) {
            self = .encode(.hevc)
        } else {
            return nil
        }
    }
}
