/// What a ``LivePusher`` holds of its pushes, in one lock: the running push, whose state its
/// ``PushControl`` decides, or, between pushes, how the last one ended and its figures.
struct PushSlot: Sendable {
    /// The running push; nil between pushes.
    var running: PushEngine?
    /// Between pushes: `idle` before the first, else `stopped` or `failed` as the last one ended.
    var lastEnd: PushState = .idle
    /// The last push's final figures (``LivePusher/stats()`` between pushes).
    var lastStats = PushStats()
    /// Every output's figures when the last push ended.
    var lastOutputs: [OutputStats] = []

    /// Where the pusher is: the running push's state, else how the last one ended.
    var state: PushState { running?.pushState ?? lastEnd }
}
