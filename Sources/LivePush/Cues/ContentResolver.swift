/// Decides what fills a placement opportunity (the TVSDK's content resolver): it answers with
/// the ad breaks to play there. Register one on ``LivePusher/resolvers``.
///
/// `process` runs on its own task under a deadline (``BreakOptions/resolverTimeout``, and
/// never past the splice). When it is late, `cancel` is called and the fallback fills the
/// opportunity; an answer after that is ignored. A throw also means the fallback.
public protocol ContentResolver: AnyObject, Sendable {
    /// Whether this resolver takes the opportunity (the first registered that does, gets it).
    func shouldHandle(_ opportunity: PlacementOpportunity) -> Bool
    /// The ad breaks to play at the opportunity.
    func process(_ opportunity: PlacementOpportunity) async throws -> [AdBreak]
    /// The answer is no longer wanted (it took too long).
    func cancel(_ opportunity: PlacementOpportunity)
}

/// What a content resolver puts into an opportunity: a break and its ads, played back to back
/// from the splice (breaks in the order given). Ads that end before the opportunity does are
/// followed by the fallback; the opportunity's end cuts an ad that runs past it.
public struct AdBreak: Sendable, Equatable {
    /// The ads, played back to back.
    public var ads: [PlayoutSchedule.Clip]

    /// Creates a break from its ads.
    public init(ads: [PlayoutSchedule.Clip]) {
        self.ads = ads
    }
}
