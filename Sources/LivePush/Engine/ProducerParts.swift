/// What only the producer uses, handed to it when the push starts: the input to put on air,
/// the slate that replaces it while paused, the raw-frame stages its inputs run (changed by
/// commands), and the stages after the clock (the outputs' renditions, the Opus encode). None of it is `Sendable`: it moves to the producer's driver (a thread of its
/// own, or a job on the ``PacingScheduler``) with `sending`, and nothing else keeps it.
struct ProducerParts {
    let source: any MediaInput
    let slate: (any MediaInput)?
    let stages: FrameStages
    let afterClock: StagesAfterClock
    /// The push's breaks (cues read, fills opened) and their director; nil: cues are not read.
    var breaks: BreakSetup? = nil
}
