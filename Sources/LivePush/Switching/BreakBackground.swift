/// The main input while a break plays. It is read on underneath, in step with the output, as
/// a live feed would be: what it shows meanwhile is dropped, its cues are still read (the
/// break's end usually comes that way), and it comes back on its first keyframe at or after
/// the break's end.
struct BreakBackground {
    var input: any MediaInput
    /// How main input time maps onto the output, as when the break started (for a playout
    /// entry that starts underneath: fixed by its first packet, where the previous one ended).
    var mapping: InputTimeMapping?
    /// Where what was read underneath ends, output time.
    var end: Int64
    /// Read from the main input, not yet due.
    var queue: [MediaPacket]
    /// Sound past the break's end, read while looking for the keyframe to come back on.
    var pastEnd: [MediaPacket] = []
    /// Where the main input comes back (its keyframe at or after the break's end), once read.
    var returnPoint: Int64?
    /// Come back on the next keyframe, whenever it is (the fills ran out).
    var returnNow = false
    var mainEnded = false
    /// The break's end the main input was asked for a keyframe at.
    var keyframeAskedFor: Int64?
    /// What is still to play; the last one (alternate, slate) repeats until the break ends.
    var fills: [BreakFill]
    /// The fill on air, kept to loop it.
    var filler: (any MediaInput)?
    /// The fill to go on air next, opening ahead while this one plays (``OpeningInput``).
    var opening: OpeningInput?
    /// The fill's sound from where the break ends on, read ahead of its pictures: it waits
    /// for them, so that the main input comes back on both tracks at once.
    var fillSound: [MediaPacket] = []
}
