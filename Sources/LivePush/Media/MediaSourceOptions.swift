/// How a file is turned into pushable packets.
public struct MediaSourceOptions: Sendable, Equatable {
    /// Re-encode even when the file is already H.264/AAC.
    public var forceTranscode: Bool
    /// Video bitrate when transcoding, kbit/s. Nil picks one from the frame size:
    /// 800 up to 640×480, 1500 up to 1280×720, 3000 above.
    public var videoBitrateKbps: Int?
    /// Audio bitrate when transcoding, kbit/s. Nil means 128 for stereo, 64 for mono.
    public var audioBitrateKbps: Int?
    /// Keyframe interval when transcoding, seconds.
    public var gopSeconds: Double

    public init(forceTranscode: Bool = false, videoBitrateKbps: Int? = nil, audioBitrateKbps: Int? = nil, gopSeconds: Double = 2) {
        self.forceTranscode = forceTranscode
        self.videoBitrateKbps = videoBitrateKbps
        self.audioBitrateKbps = audioBitrateKbps
        self.gopSeconds = gopSeconds
    }

    /// The video bitrate (bit/s) to encode a `width`×`height` picture at.
    func resolvedVideoBitrate(width: Int, height: Int) -> Int {
        if let kbps = videoBitrateKbps, kbps > 0 { return kbps * 1000 }
        let pixels = width * height
        if pixels <= 640 * 480 { return 800_000 }
        if pixels <= 1280 * 720 { return 1_500_000 }
        return 3_000_000
    }

    /// The audio bitrate (bit/s) to encode `channels` channels at.
    func resolvedAudioBitrate(channels: Int) -> Int {
        if let kbps = audioBitrateKbps, kbps > 0 { return kbps * 1000 }
        return channels == 1 ? 64_000 : 128_000
    }
}
