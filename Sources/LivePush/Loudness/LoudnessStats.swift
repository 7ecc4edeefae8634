/// What the loudness stage measured on the sound it sent (``PushStats/loudness``), after its
/// gain and limiter: what a viewer hears and what a platform's meter reads.
public struct LoudnessStats: Sendable, Equatable {
    /// Momentary loudness (last 400 ms), LUFS; nil before 400 ms or in silence.
    public var momentary: Double?
    /// Short-term loudness (last 3 s), LUFS; nil before 3 s or in silence.
    public var shortTerm: Double?
    /// Gated integrated loudness since the push started, LUFS; nil until sound came.
    public var integrated: Double?
    /// The highest true peak since the push started, dBTP; nil in silence.
    public var truePeak: Double?
    /// The gain the normaliser applies now, dB (before the limiter).
    public var gain: Double = 0
    /// The target it normalises to, LUFS.
    public var target: Double = 0

    /// Creates empty figures.
    public init() {}
}
