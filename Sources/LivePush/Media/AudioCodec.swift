import LivePushWire

/// The codec a track's sound is sent in.
public enum AudioCodec: String, Sendable, Equatable, CaseIterable {
    /// AAC-LC: legacy FLV, MPEG-TS, HLS. What every RTMP server takes.
    case aac
    /// Opus: WebRTC's codec, and Enhanced RTMP v2's `Opus` FourCC (FFmpeg 8, MediaMTX, Twitch).
    case opus

    /// Its Enhanced RTMP FourCC; nil for AAC, which legacy FLV names.
    var enhancedRTMP: FLVExAudioCodec? { self == .opus ? .opus : nil }
}
