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
    /// Frames the detector never saw: it takes only the newest frame, and a slow one skips
    /// those that came while it worked (internal: the tests account for every frame with it).
    var detectorFramesSkipped = 0
    /// The most consecutive one-second windows whose capacity was under the low-performance
    /// threshold (internal: tests check the warning against what was measured).
    var longestSlowWindowRun = 0
    /// Pictures the input kept for the renditions after the clock that its encoder never
    /// returned a packet for (``PicturesAwaitingEncode``): 0 unless an encoder drops pictures
    /// (internal: tests check that every picture found its packet).
    var picturesUnmatched = 0

    /// Creates empty figures.
    public init() {}
}
