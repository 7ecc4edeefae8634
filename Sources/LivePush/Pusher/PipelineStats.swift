/// What the raw-frame video pipeline measured, part of ``PushStats``; zero when the video
/// is stream-copied.
public struct PipelineStats: Sendable, Equatable {
    /// The video encoder's current bitrate, bit/s.
    public var encoderBitrate = 0
    /// Adaptive-bitrate changes applied to the encoder.
    public var bitrateChanges = 0
    /// Frames per second the pipeline (decode, filters, encode) could sustain, last second.
    public var encoderCapacityFPS: Double = 0
    /// Frames that went through at least one filter.
    public var filteredFrames = 0
    /// Low-performance warnings (805438211) reported.
    public var lowPerformanceEpisodes = 0

    /// Creates empty figures.
    public init() {}
}
