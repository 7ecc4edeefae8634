/// What the producer puts on air after its first input, one input at a time: a playout
/// timeline. Called on the producer thread; the inputs it is given are the producer's, used
/// only during the call.
protocol InputSequence: AnyObject, Sendable {
    /// The input on air ended (or was skipped): the next one, or nil when the sequence is over.
    /// Returns at once when ``nextInputIsReady(after:whenReady:)`` said so.
    func nextInput() -> (any MediaInput)?
    /// `ended` is over (it ended, or was skipped): whether ``nextInput()`` would return at once
    /// (what plays next is open). When not, it starts opening on another thread and `whenReady`
    /// is called once it is: the producer waits for that, not for the opening.
    func nextInputIsReady(after ended: any MediaInput, whenReady: @escaping @Sendable () -> Void) -> Bool
    /// The input just put on air starts at output time `start` (µs): the cues that belong there
    /// (a break starting or ending at it, one announced ahead of the next break).
    func cues(forInputStartingAt start: Int64) -> [AdCue]
    /// `input`, on air, is being skipped; `unsent` is what it produced that will not go out
    /// (so the sequence knows where it really stopped).
    func inputSkipped(_ input: any MediaInput, unsent: [MediaPacket])
    /// `input`, on air, failed mid-way: what stands in for the rest of it (nil: the push fails).
    func inputFailed(_ input: any MediaInput, _ error: LivePushError) -> (any MediaInput)?
    /// Whether an input to come may wait for data (a live entry): the producer then gets a
    /// thread of its own rather than a turn on the shared pacing threads, which must never block.
    var inputsMayWait: Bool { get }
    /// The output's first frame was released, in real time, at its output time `time` (µs):
    /// the moment output time is tied to the wall clock.
    func outputStarted(at time: Int64)
    /// A break (a blackout, an ad break read from a cue) took the sequence's input off air at
    /// output time `time`; `fill` names what fills it, `source` its file when it is one.
    func breakStarted(_ opportunity: PlacementOpportunity, fill: String, source: String?, at time: Int64)
    /// The break ended at output time `time`: the sequence's input is on air again.
    func breakEnded(at time: Int64)
    /// The sequence is over; the output ends at `time` (µs).
    func sequenceEnded(at time: Int64)
}

/// What the as-run log needs from the switcher; a sequence that keeps none ignores it.
extension InputSequence {
    func outputStarted(at time: Int64) {}
    func breakStarted(_ opportunity: PlacementOpportunity, fill: String, source: String?, at time: Int64) {}
    func breakEnded(at time: Int64) {}
    func sequenceEnded(at time: Int64) {}
}
