/// What a push reports about the cues it reads and the breaks it plays (``PushEvent/breaks(_:)``).
public enum BreakEvent: Sendable, Equatable {
    /// A cue was read from the input (the opportunities it opened or closed follow).
    case cueReceived(SourceCue)
    /// A malformed cue was ignored (`cueInvalid`).
    case cueRejected(LivePushError)
    /// A cue opened a placement opportunity.
    case opportunityDetected(PlacementOpportunity)
    /// A content resolver answered with this many ads.
    case opportunityResolved(PlacementOpportunity, ads: Int)
    /// The content resolver threw (`opportunityUnresolved`); the fallback fills it.
    case opportunityFailed(PlacementOpportunity, LivePushError)
    /// The content resolver was too late and was cancelled; the fallback fills it.
    case opportunityTimedOut(PlacementOpportunity)
    /// The output switched away from the main content (which goes on underneath).
    case breakStarted(PlacementOpportunity, fill: String)
    /// The output went back to the main content.
    case breakEnded(PlacementOpportunity)
    /// A blackout began: alternate content (or the slate) replaces the main content.
    case blackoutStarted(PlacementOpportunity)
    /// A blackout ended.
    case blackoutEnded(PlacementOpportunity)

    /// The opportunity the event is about, if any.
    public var opportunity: PlacementOpportunity? {
        switch self {
        case .opportunityDetected(let o), .opportunityResolved(let o, _), .opportunityFailed(let o, _), .opportunityTimedOut(let o),
             .breakStarted(let o, _), .breakEnded(let o), .blackoutStarted(let o), .blackoutEnded(let o): o
        case .cueReceived, .cueRejected: nil
        }
    }

    /// The event's name, for logs and JSON.
    public var name: String {
        switch self {
        case .cueReceived: "cueReceived"
        case .cueRejected: "cueRejected"
        case .opportunityDetected: "opportunityDetected"
        case .opportunityResolved: "opportunityResolved"
        case .opportunityFailed: "opportunityFailed"
        case .opportunityTimedOut: "opportunityTimedOut"
        case .breakStarted: "breakStarted"
        case .breakEnded: "breakEnded"
        case .blackoutStarted: "blackoutStarted"
        case .blackoutEnded: "blackoutEnded"
        }
    }
}
