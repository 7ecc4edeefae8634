/// Where raw sound goes on the push's one AAC encode (``AudioEncodeStage``), which takes
/// samples back to back: after the clock the timeline runs on across loops and switches, so
/// the encoder is never reset for them, but a segment may start after the sound ended (the
/// pictures ended later: the clock lays the next input where both tracks end) or, rarely,
/// before (a frame clamped by the clock). Pure: it says, for each block of samples, how much
/// silence goes before it and how many of its first samples are dropped.
///
/// Differences up to `tolerance` samples are left alone: a few samples of a resampler's delay
/// or of rounding µs to samples are no gap (inputs stamp their sound by sample count, an app's
/// frames too, so its arrival jitter never reaches here). Beyond it, a gap is filled with
/// silence (the sound stays on time with the pictures, and the stream stays continuous for
/// players that play frames back to back) and an overlap is cut from the block's start (the
/// output never goes back in time).
struct SoundPlacement {
    /// What to do with one block.
    struct Decision: Equatable {
        /// Samples of silence before the block.
        var silence: Int
        /// Samples dropped from the block's start (all of them: the block lies before the end).
        var skip: Int
    }

    let tolerance: Int64
    /// Where the samples taken so far end (in samples of the encode's rate); nil before the first.
    private(set) var end: Int64?

    init(tolerance: Int64) {
        self.tolerance = tolerance
    }

    /// A block of `count` samples whose first sample is at `start`.
    mutating func place(at start: Int64, count: Int) -> Decision {
        guard let end else {
            self.end = start + Int64(count)
            return Decision(silence: 0, skip: 0)
        }
        let difference = start - end
        if difference > tolerance {
            self.end = start + Int64(count)
            return Decision(silence: Int(difference), skip: 0)
        }
        if difference < -tolerance {
            let skip = Int(min(Int64(count), -difference))
            self.end = end + Int64(count - skip)
            return Decision(silence: 0, skip: skip)
        }
        self.end = end + Int64(count)
        return Decision(silence: 0, skip: 0)
    }

    /// The encode starts again (after copied sound): the next block fixes the timeline.
    mutating func reset() {
        end = nil
    }
}
