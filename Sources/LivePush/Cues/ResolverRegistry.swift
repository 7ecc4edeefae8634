import Synchronization

/// The resolvers a push consults, registered and cleared like the TVSDK's client factory.
/// It starts with the SCTE-35 opportunity resolver for the configured subscription and no
/// content resolver. Safe from any thread; a push takes a copy when it starts.
public final class ResolverRegistry: Sendable {
    private struct Registered {
        var opportunity: [any OpportunityResolver]
        var content: [any ContentResolver]
    }

    private let registered = Mutex(Registered(opportunity: [], content: []))
    /// Whether the default SCTE-35 resolver stays registered.
    private let keepsDefault = Mutex(true)

    /// Creates a registry with the default SCTE-35 resolver.
    public init() {}

    /// Adds an opportunity resolver, consulted after those already registered.
    public func register(_ resolver: any OpportunityResolver) {
        registered.withLock { $0.opportunity.append(resolver) }
    }

    /// Adds a content resolver, consulted after those already registered.
    public func register(_ resolver: any ContentResolver) {
        registered.withLock { $0.content.append(resolver) }
    }

    /// Removes every opportunity resolver, the default one too.
    public func clearOpportunityResolvers() {
        registered.withLock { $0.opportunity.removeAll() }
        keepsDefault.withLock { $0 = false }
    }

    /// Removes every content resolver.
    public func clearContentResolvers() {
        registered.withLock { $0.content.removeAll() }
    }

    /// What a push starting with `subscription` consults.
    func snapshot(subscription: CueSubscription) -> (opportunity: [any OpportunityResolver], content: [any ContentResolver]) {
        let (opportunity, content) = registered.withLock { ($0.opportunity, $0.content) }
        let defaults: [any OpportunityResolver] = keepsDefault.withLock { $0 } ? [SCTE35OpportunityResolver(subscription: subscription)] : []
        return (defaults + opportunity, content)
    }
}
