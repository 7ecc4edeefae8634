/// How a file is turned into pushable packets.
public struct MediaSourceOptions: Sendable, Equatable {
    /// Re-encode even when the file is already H.264/AAC.
    public var forceTranscode: Bool
    /// The codec the video goes out in (`--video-codec`): H.264 by default, which every RTMP
    /// server takes; a source already in that codec is sent as it is unless a stage needs its
    /// pictures. `.copy` sends H.264, HEVC, AV1 or VP9 as they are.
    public var videoCodec: VideoCodecChoice = .encode(.h264)
    /// Video bitrate when transcoding, kbit/s. Nil picks one from the frame size:
    /// 800 up to 640×480, 1500 up to 1280×720, 3000 above.
    public var videoBitrateKbps: Int?
    /// Audio bitrate when transcoding, kbit/s. Nil means 128 for stereo, 64 for mono.
    public var audioBitrateKbps: Int?
    /// The codec RTMP outputs carry the sound in (`--audio-codec`): AAC (legacy FLV, the
    /// default), or Opus (Enhanced RTMP v2's `Opus`), encoded once after the clock for every
    /// output that takes it. SRT and HLS outputs and the recording keep AAC; WHIP outputs
    /// always carry Opus.
    public var audioCodec: AudioCodec = .aac
    /// Keyframe interval when transcoding, seconds.
    public var gopSeconds: Double
    /// Encoded picture size; nil keeps the source's (rounded down to even).
    public var outputSize: VideoSize?
    /// Encoded frames per second; nil keeps the source's. Frames are dropped or repeated to fit.
    public var frameRate: Double?
    /// libx264 preset (ultrafast ... placebo); other encoders ignore it.
    public var preset = "veryfast"
    /// Adaptive bitrate never goes below this, kbit/s. Nil means a quarter of the target
    /// (the reference's 200 of 800).
    public var minVideoBitrateKbps: Int?
    /// libx264 with slice threads (like `-tune zerolatency`: no frame of encoder delay) rather
    /// than frame threads (1 frame of delay, about 10-25% faster on two cores).
    public var lowestLatencyEncoding = false
    /// Bitrate the encoder starts at, kbit/s; nil means the target.
    public var initialVideoBitrateKbps: Int?
    /// Step the video bitrate down when the network is poor and back up when it recovers
    /// (on by default, as in the reference). Only when the video is encoded: a stream-copied
    /// track is sent as it is, and a poor network is met by the send queue's drop policy.
    public var adaptiveBitrate = true

    /// Creates options.
    public init(forceTranscode: Bool = false, videoBitrateKbps: Int? = nil, audioBitrateKbps: Int? = nil, gopSeconds: Double = 2) {
        self.forceTranscode = forceTranscode
        self.videoBitrateKbps = videoBitrateKbps
        self.audioBitrateKbps = audioBitrateKbps
        self.gopSeconds = gopSeconds
    }

    /// Decode and encode the video even when it could be copied: filters, detectors and
    /// adaptive bitrate work only on encoded video. Set by the pusher when it needs it.
    public var encodeVideo = false
    /// Re-encode the audio so background music and sound effects can be mixed into it, and give
    /// a video-only source a generated audio track. A push is also in mixing mode when music or
    /// effects are playing at `start`; set this to start music later in a push of copyable AAC.
    public var audioMixing = false
    /// Normalise the programme's sound live to this loudness, under this true-peak ceiling
    /// (``LoudnessTarget``), after the mixer; nil (the default): the sound is untouched. Set,
    /// the sound is always decoded and encoded.
    public var loudness: LoudnessTarget?
    /// Image pushed while paused (set by the pusher from ``PushConfig/pauseImage``).
    var pauseImage: String?
    /// Start here (µs of the file) instead of at the beginning: the demuxer seeks before it,
    /// and encoded tracks drop the frames decoded before it (playout clips' `in` points).
    var startTime: Int64?
    /// Encoded audio at this rate (44.1 or 48 kHz) whatever the source's (a playout channel's format).
    var audioSampleRate: Int?

    /// Whether any option needs the video decoded and encoded even when it could be copied.
    var needsVideoEncoding: Bool { forceTranscode || encodeVideo || outputSize != nil || frameRate != nil || pauseImage != nil }
    /// Whether the audio must be re-encoded: silence under a pause image is encoded.
    var needsAudioEncoding: Bool { forceTranscode || pauseImage != nil || audioMixing || loudness != nil }

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

/// A picture size in pixels.
public struct VideoSize: Sendable, Equatable, CustomStringConvertible {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// Creates a size.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// Parses "1280x720".
    public init?(_ text: String) {
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w >= 16, h >= 16, w <= 8192, h <= 8192 else {
            return nil
        }
        self.init(width: w, height: h)
    }

    public var description: String { "\(width)x\(height)" }
}
