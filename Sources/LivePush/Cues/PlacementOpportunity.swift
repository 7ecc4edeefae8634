/// A point of the input where other content may replace the main content (the TVSDK's
/// placement opportunity): an ad break or a blackout, on the input's own timeline.
public struct PlacementOpportunity: Sendable, Equatable, Identifiable {
    /// What an opportunity allows.
    public enum Kind: String, Sendable, Equatable {
        /// Ads may play here (a resolver's ads, else the fallback).
        case adBreak
        /// The main content must not be shown here: alternate content (or the slate) plays.
        case blackout
    }

    /// The cue's event id (splice_event_id or segmentation_event_id).
    public var id: UInt32
    /// An ad break or a blackout.
    public var kind: Kind
    /// Where it starts, µs of the input's timeline.
    public var start: Int64
    /// How long it lasts, µs, when the opening cue says; otherwise a closing cue ends it.
    public var duration: Int64?
    /// The cue that opened it (nil when the schedule or a command did).
    public var cue: SourceCue?

    /// Creates an opportunity.
    public init(id: UInt32, kind: Kind, start: Int64, duration: Int64?, cue: SourceCue? = nil) {
        self.id = id
        self.kind = kind
        self.start = start
        self.duration = duration
        self.cue = cue
    }
}

/// What a cue means for the opportunities (an ``OpportunityResolver``'s answer).
public enum OpportunitySignal: Sendable, Equatable {
    /// A new opportunity opens.
    case opens(PlacementOpportunity)
    /// The opportunity with this id ends at `at` (µs of the input).
    case closes(id: UInt32, at: Int64)
    /// The opportunity with this id is called off.
    case cancels(id: UInt32)
}
