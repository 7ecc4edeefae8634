/// The stages after the output clock, each there when some output needs it.
struct StagesAfterClock {
    /// The outputs' own renditions; nil: every output takes the push's video.
    var renditions: RenditionStage?
    /// The sound of the outputs that carry Opus (WHIP); nil: every output takes the push's AAC.
    var opus: OpusStage?
}
