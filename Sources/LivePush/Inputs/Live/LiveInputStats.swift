/// What a live input did (``PushStats/input``): the source on air, the switches, and the frame
/// slots that had to be filled or frames dropped to keep the output continuous.
public struct LiveInputStats: Sendable, Equatable {
    /// What is on air now.
    public var onAir: LiveInputSource = .primary
    /// Switches between the primary, the backup and the slate.
    public var switches = 0
    /// Frame slots the primary was late for (filled by `--input-loss`).
    public var filledFrames = 0
    /// The feed's frames dropped because they arrived faster than the output took them.
    public var droppedFrames = 0
    /// Connections made to the primary.
    public var connections = 0

    /// Creates empty figures.
    public init() {}
}
