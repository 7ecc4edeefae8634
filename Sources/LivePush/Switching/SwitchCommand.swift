/// The controls that change what is on air (the switching part of a ``EngineCommand``).
enum SwitchCommand: Sendable, Equatable {
    /// Output time stops with the wall clock; nothing is sent until ``resume``.
    case pause
    /// Continue after ``pause``, with continuous timestamps.
    case resume
    /// The slate (the pause image) instead of the input, from the next packet.
    case showSlate
    /// Back from the slate to the input, on a keyframe, where the slate ended.
    case leaveSlate
    /// End the entry on air now and go on with the next (playout).
    case skip
    /// A blackout from the main input's next picture, for `duration` or until ``endBlackout``.
    case startBlackout(duration: Duration?)
    /// The break or blackout on air ends (on the main input's next keyframe).
    case endBlackout
    /// The input on air makes its next picture a keyframe, when it encodes.
    case requestKeyframe
}
