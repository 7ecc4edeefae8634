/// A snapshot of a push, on demand (``LivePusher/stats()``) and every `statsInterval`.
public struct PushStats: Sendable, Equatable {
    /// Wall time since the push started.
    public var elapsed: Duration = .zero
    /// Output media time of the latest audio or video frame sent, microseconds (sequence
    /// headers and cues, which may go out ahead of the frames they precede, do not count).
    public var mediaTimeSent: Int64 = 0
    /// Duration of one pass over the source, microseconds (0 when unknown).
    public var sourceDuration: Int64 = 0
    /// Passes over the source completed (for `--loop`).
    public var loopsCompleted = 0
    /// Video frames sent.
    public var videoFramesSent = 0
    /// Audio frames sent.
    public var audioFramesSent = 0
    /// Bytes sent.
    public var bytesSent: Int64 = 0
    /// Bits per second sent over the last second.
    public var bitrate: Int = 0
    /// Video frames per second sent over the last second.
    public var fps: Double = 0
    /// Frames the send queue dropped, by kind.
    public var droppedFrames = FrameDrops()
    /// Packets waiting in the send queue, and how much media they hold (microseconds).
    public var queuedPackets = 0
    /// Media waiting in the send queue, microseconds.
    public var queuedDuration: Int64 = 0
    /// What the raw-frame pipeline measured (zero for stream copy).
    public var pipeline = PipelineStats()
    /// A live input's figures (nil for a file): the source on air, switches, filled slots.
    public var input: LiveInputStats?
    /// With several outputs (simulcast): each one's figures. The figures above are then the
    /// first output's (and the source's).
    public var outputs: [OutputStats] = []
    /// With `PushConfig.recordPath`: bytes written to the local recording, and packets it
    /// dropped because its queue was full (real time only; a `--fast` push waits instead).
    public var recordedBytes: Int64 = 0
    /// Frames the local recording dropped.
    public var recordingDrops = 0
    /// Where the sound sent so far ends minus where the pictures end, microseconds of output
    /// time: positive when the sound runs ahead (half an AAC frame or so is normal).
    public var avOffset: Int64 = 0
    /// How late the producer released packets to the outputs, against the output clock (real
    /// time only).
    public var lateness = PacingLateness()
    /// How late the (first) output wrote them to its socket: the release's lateness plus the
    /// time in the send queue (and any reconnect that held them).
    public var sendLateness = PacingLateness()
    /// With per-output video (``PushConfig/outputVideo``): pictures the one decode after the
    /// clock produced for the renditions. Only what came without a picture is decoded there
    /// (a copied stream): see ``renditionFramesFromInput``.
    public var renditionFramesDecoded = 0
    /// With per-output video: pictures the renditions took as the input encoded them (after its
    /// filters and scale), when the input transcodes; these are never decoded again.
    public var renditionFramesFromInput = 0
    /// With per-output video: video packets the renditions could not use, neither carrying a
    /// picture nor decodable (no keyframe before them since the decode started). 0 normally.
    public var renditionPacketsSkipped = 0
    /// Each rendition's figures.
    public var renditions: [RenditionStats] = []
    /// With WHIP outputs: Opus frames (20 ms each) the one Opus encode after the clock made from
    /// the push's AAC, for all of them.
    public var opusFramesEncoded = 0
    /// With ``MediaSourceOptions/loudness``: the loudness of the sound sent (momentary,
    /// short-term, integrated, true peak) and the gain applied; nil without it.
    public var loudness: LoudnessStats?

    /// Creates empty figures.
    public init() {}
}

/// Frames dropped by the send queue's policy, by kind (see `SendQueue`).
public struct FrameDrops: Sendable, Equatable {
    /// Non-reference video frames (B-frames).
    public var disposable = 0
    /// Reference (P) video frames at the tail of a GOP, or after a keyframe could not be kept.
    public var reference = 0
    /// Keyframes, each dropped together with its whole GOP.
    public var keyframes = 0
    /// Audio frames.
    public var audio = 0
    /// All frames dropped.
    public var total: Int { disposable + reference + keyframes + audio }

    /// Creates empty figures.
    public init() {}
}

/// One destination's figures, when a push has several (see ``PushStats/outputs``).
public struct OutputStats: Sendable, Equatable {
    /// The position of the output's URL.
    public var id: Int
    /// The output's URL, redacted.
    public var url: String
    /// True while the output is connected.
    public var isConnected: Bool
    /// Bytes this output sent.
    public var bytesSent: Int64
    /// Video frames this output sent.
    public var videoFramesSent: Int
    /// Audio frames this output sent.
    public var audioFramesSent: Int
    /// Bits per second sent over the last second.
    public var bitrate: Int
    /// Frames this output's queue dropped, by kind.
    public var droppedFrames: FrameDrops
    /// Media waiting in this output's queue, microseconds.
    public var queuedDuration: Int64
    /// How late this output wrote packets to its socket, against the output clock.
    public var sendLateness: PacingLateness
    /// The output's kind, from its URL: `rtmp`, `rtmps`, `srt`, `whip` or `hls`.
    public var kind: String = "rtmp"
    /// An SRT output's link, as SRT measures it (RTT, loss, retransmissions); nil for RTMP.
    public var srt: SRTLinkStats?
    /// A WHIP output's link, as its peer's receiver reports say (quality, loss, RTT, jitter).
    public var webrtc: WebRTCLinkStats?
    /// Reconnects this output began in the push.
    public var reconnects = 0
    /// The send loop that served it last (its place in the pool), nil before it published:
    /// outputs on one loop share its thread (internal: tests compare the outputs sharing one).
    var sendLoop: Int?
    /// An HLS output's segments and store (nil for the others).
    public var hls: HLSOutputStats?
}

/// One rendition's figures (see ``PushStats/renditions``).
public struct RenditionStats: Sendable, Equatable {
    /// The rendition's size, bitrate and codec.
    public var rendition: VideoRendition
    /// The outputs it feeds, by id.
    public var outputs: [Int]
    /// Frames encoded.
    public var framesEncoded: Int
    /// The encoder's bitrate now (bit/s): adaptive bitrate moves it for its outputs.
    public var bitrate: Int
}
