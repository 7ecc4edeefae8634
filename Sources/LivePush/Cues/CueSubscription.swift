import FoundationEssentials

/// Which cues open opportunities (the TVSDK's subscribed tags). By default: an out-of-network
/// `splice_insert`, and a segmentation start for a break (0x22), a provider or distributor
/// placement opportunity (0x34, 0x36), or a program blackout (0x18, a blackout).
public struct CueSubscription: Sendable, Equatable {
    /// Whether an out-of-network `splice_insert` opens an ad break.
    public var spliceInserts = true
    /// Segmentation starts that open an ad break.
    public var adBreakTypes: Set<UInt8> = [SCTE35SegmentationType.breakStart,
                                           SCTE35SegmentationType.providerPlacementOpportunityStart,
                                           SCTE35SegmentationType.distributorPlacementOpportunityStart]
    /// Segmentation starts that open a blackout.
    public var blackoutTypes: Set<UInt8> = [SCTE35SegmentationType.programBlackoutOverride]
    /// The cue tags an HLS input reads (the TVSDK's `setSubscribedTags`): all by default.
    public var hlsTags: Set<HLSTagFamily> = Set(HLSTagFamily.allCases)

    /// Creates the default subscription.
    public init() {}

    /// The names `--subscribe` takes, and what each adds.
    public static let names: [String: (spliceInsert: Bool, adBreak: [UInt8], blackout: [UInt8])] = [
        "splice_insert": (true, [], []),
        "break": (false, [SCTE35SegmentationType.breakStart], []),
        "provider_po": (false, [SCTE35SegmentationType.providerPlacementOpportunityStart], []),
        "distributor_po": (false, [SCTE35SegmentationType.distributorPlacementOpportunityStart], []),
        "provider_ad": (false, [SCTE35SegmentationType.providerAdvertisementStart], []),
        "distributor_ad": (false, [SCTE35SegmentationType.distributorAdvertisementStart], []),
        "blackout": (false, [], [SCTE35SegmentationType.programBlackoutOverride]),
    ]

    /// Parses a comma-separated list of names (``names``), `0xNN` segmentation start types (ad
    /// breaks), `blackout:0xNN` (blackouts) and HLS tag names (``HLSTagFamily``:
    /// `#EXT-OATCLS-SCTE35`, `#EXT-X-CUE-OUT` or `#EXT-X-CUE-IN`, `#EXT-X-DATERANGE`). Tag names
    /// choose which tags an HLS input reads (all when none is named); the other names, which
    /// cues open opportunities (the default ones when none is named). Throws
    /// `breakSetupInvalid` naming a bad item.
    public init(parsing list: String) throws(LivePushError) {
        spliceInserts = false
        adBreakTypes = []
        blackoutTypes = []
        var tags: Set<HLSTagFamily> = []
        var namesCues = false
        let items = list.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingSpaces.lowercased() }
        guard !items.isEmpty, !items.contains(where: \.isEmpty) else {
            throw LivePushError(.breakSetupInvalid, "--subscribe: give a comma-separated list of cue names")
        }
        for item in items {
            if let family = HLSTagFamily(tagName: item) {
                tags.insert(family)
                continue
            }
            namesCues = true
            if let named = Self.names[item] {
                spliceInserts = spliceInserts || named.spliceInsert
                adBreakTypes.formUnion(named.adBreak)
                blackoutTypes.formUnion(named.blackout)
            } else if item.hasPrefix("blackout:"), let type = Self.segmentationType(item.dropFirst("blackout:".count)) {
                blackoutTypes.insert(type)
            } else if let type = Self.segmentationType(Substring(item)) {
                adBreakTypes.insert(type)
            } else {
                let known = Self.names.keys.sorted().joined(separator: ", ")
                let shown = TerminalText.escape(item, limit: 64)
                throw LivePushError(.breakSetupInvalid,
                                    "--subscribe: \"\(shown)\" is not a cue name (\(known)), a segmentation start type like 0x30, nor an HLS tag (#EXT-OATCLS-SCTE35, #EXT-X-CUE-OUT, #EXT-X-DATERANGE)")
            }
        }
        if !tags.isEmpty { hlsTags = tags }
        if !namesCues {
            let defaults = CueSubscription()
            spliceInserts = defaults.spliceInserts
            adBreakTypes = defaults.adBreakTypes
            blackoutTypes = defaults.blackoutTypes
        }
    }

    /// What a segmentation start of this type opens, if it is subscribed.
    func kind(ofSegmentationType type: UInt8) -> PlacementOpportunity.Kind? {
        if blackoutTypes.contains(type) { return .blackout }
        if adBreakTypes.contains(type) { return .adBreak }
        return nil
    }

    private static func segmentationType(_ text: Substring) -> UInt8? {
        guard text.hasPrefix("0x"), let value = UInt8(text.dropFirst(2), radix: 16),
              !SCTE35SegmentationType.isEnd(value) else { return nil }
        return value
    }
}
