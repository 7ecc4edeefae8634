import LivePushWire

/// The default opportunity resolver: SCTE-35, filtered by the subscribed cues.
///
/// - An out-of-network `splice_insert` opens an ad break, for its `break_duration` when it
///   has one with `auto_return`; the `splice_insert` back in (same event id) closes it.
/// - A segmentation start of a subscribed type opens an ad break (a blackout for the
///   subscription's blackout types), for the descriptor's duration when given; a segmentation
///   end with the same segmentation_event_id closes it.
/// - A cancel (either kind) calls the opportunity off; `splice_null` means nothing.
public struct SCTE35OpportunityResolver: OpportunityResolver {
    /// Which cues count.
    public var subscription: CueSubscription

    /// Creates a resolver for these cues.
    public init(subscription: CueSubscription = CueSubscription()) {
        self.subscription = subscription
    }

    public func signals(for cue: SourceCue) -> [OpportunitySignal] {
        var signals: [OpportunitySignal] = []
        if case .insert(let insert) = cue.section.command, subscription.spliceInserts {
            if insert.cancel {
                signals.append(.cancels(id: insert.eventID))
            } else if insert.outOfNetwork {
                let duration = insert.autoReturn ? cue.duration : nil
                signals.append(.opens(PlacementOpportunity(id: insert.eventID, kind: .adBreak, start: cue.spliceTime,
                                                           duration: duration, cue: cue)))
            } else {
                signals.append(.closes(id: insert.eventID, at: cue.spliceTime))
            }
        }
        for segmentation in cue.segmentations {
            if segmentation.cancel {
                signals.append(.cancels(id: segmentation.eventID))
            } else if SCTE35SegmentationType.isEnd(segmentation.typeID) {
                signals.append(.closes(id: segmentation.eventID, at: cue.spliceTime))
            } else if let kind = subscription.kind(ofSegmentationType: segmentation.typeID) {
                let duration = segmentation.duration.map { Int64($0 * 1_000_000 / SCTE35.clockRate) }
                signals.append(.opens(PlacementOpportunity(id: segmentation.eventID, kind: kind, start: cue.spliceTime,
                                                           duration: duration, cue: cue)))
            }
        }
        return signals
    }
}
