/// An input with the raw-frame stages it runs, as a push starts: one value, because the two
/// belong together (the input's encoder runs the stages) and move together to the producer.
struct InputAndStages {
    let input: any MediaInput
    let stages: FrameStages
    /// The push's breaks, whose fills open with these stages (nil: cues are not read).
    var breaks: BreakSetup? = nil
}
