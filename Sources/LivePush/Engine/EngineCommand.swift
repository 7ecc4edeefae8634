/// A control sent down into a running push. The producer thread takes each one between two
/// packets, in the order they were sent; nothing is shared with it beyond this queue.
enum EngineCommand: Sendable {
    /// Stop sending media; the connection stays. Output time stops with the wall clock.
    case pause
    /// Continue after ``pause``, on a keyframe, with continuous timestamps.
    case resume
    /// Play the session's slate (the pause image) instead of the input, from now on.
    case showSlate
    /// Back from the slate to the input, on a keyframe, where the slate ended.
    case leaveSlate
    /// End the entry on air now and go on with the next (playout).
    case skip
    /// The push's network became poor or recovered: the input encoder's adaptive bitrate.
    case networkChanged(isPoor: Bool)
    /// The video filters from the next frame on, in order (``FilterChain``).
    case setFilters([any VideoFilter])
    /// The detector that sees the frames beside the filters; nil: none.
    case setDetector((any FrameDetector)?)
    /// A blackout from the main input's next picture, for `duration` or until ``endBlackout``.
    case startBlackout(duration: Duration?)
    /// The break or blackout on air ends (on the main input's next keyframe).
    case endBlackout
    /// Output `id`'s network became poor or recovered: its rendition's adaptive bitrate.
    case outputNetwork(id: Int, isPoor: Bool)
    /// Output `id`'s WebRTC peer lost pictures (PLI/FIR): the next picture encoded for it (its
    /// rendition's, else the input's) is a keyframe.
    case keyframeRequested(output: Int)
}

extension EngineCommand {
    /// The command as the ``Switcher`` takes it, when it changes what is on air. (A keyframe
    /// request goes to the output's own encode first: the producer decides.)
    var switchCommand: SwitchCommand? {
        switch self {
        case .pause: .pause
        case .resume: .resume
        case .showSlate: .showSlate
        case .leaveSlate: .leaveSlate
        case .skip: .skip
        case .startBlackout(let duration): .startBlackout(duration: duration)
        case .endBlackout: .endBlackout
        case .networkChanged, .setFilters, .setDetector, .outputNetwork, .keyframeRequested: nil
        }
    }
}
