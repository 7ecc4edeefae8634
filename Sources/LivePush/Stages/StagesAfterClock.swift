/// The stages after the output clock, each there when some output needs it.
struct StagesAfterClock {
    /// The push's video encode of the pictures its inputs yield; nil: no input yields any
    /// (every input's video is copied).
    var videoEncode: VideoEncodeStage?
    /// The push's sound encode of the raw sound its inputs yield; nil: the push has no sound.
    var audioEncode: AudioEncodeStage?
    /// The outputs' own renditions; nil: every output takes the push's video.
    var renditions: RenditionStage?
    /// The sound of the outputs that carry Opus (WHIP); nil: every output takes the push's AAC.
    var opus: OpusStage?
    /// Holds the first pictures until the push's first coded sound; nil: the push's sound is
    /// not encoded from the start (copied, or none), so the clock's order stands.
    var firstSound: FirstSoundGate?
}
