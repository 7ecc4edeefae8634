/// How a push fills the opportunities its input's cues open (``PushConfig/breaks``).
public struct BreakOptions: Sendable, Equatable {
    /// What plays in an opportunity nothing else fills.
    public enum Fallback: String, Sendable, Equatable, CaseIterable {
        /// The alternate content (``alternate``), looped when shorter.
        case alternate
        /// A black picture with silence.
        case slate
        /// The main content, untouched (an ad break nobody filled is not taken).
        case main
    }

    /// Alternate content (a media file): blackouts, and by default unfilled ad breaks.
    public var alternate: String?
    /// What fills an ad break no content resolver filled in time; nil: the alternate content
    /// when there is one, else the main content. A blackout never shows the main content: it
    /// gets the alternate content, else the slate.
    public var fallback: Fallback?
    /// Which cues count.
    public var subscription = CueSubscription()
    /// How long a content resolver may take (never past the splice).
    public var resolverTimeout: Duration = .seconds(2)
    /// Pass the input's own cues on, re-stamped to the output (as ``PushConfig/cueFormat``).
    public var passSourceCues = true
    /// Blackouts known in advance, by position on the output timeline or by wall-clock time.
    public var blackouts: [BlackoutWindow] = []

    /// Creates the default options: no alternate content, default cues.
    public init() {}

    /// What fills an ad break with nothing resolved.
    var adBreakFallback: Fallback { fallback ?? (alternate != nil ? .alternate : .main) }
}
