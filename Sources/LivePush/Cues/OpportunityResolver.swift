import LivePushWire

/// Turns a cue read from the input into placement opportunities (the TVSDK's opportunity
/// resolver). Called on the push's producer thread: answer at once.
public protocol OpportunityResolver: Sendable {
    /// What the cue means; empty when it means nothing to this resolver.
    func signals(for cue: SourceCue) -> [OpportunitySignal]
}

