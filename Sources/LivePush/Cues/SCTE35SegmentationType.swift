/// SCTE-35 `segmentation_type_id`s that matter to opportunities, by name (for `--subscribe`).
public enum SCTE35SegmentationType {
    /// Program Start (0x10).
    public static let programStart: UInt8 = 0x10
    /// Program End (0x11).
    public static let programEnd: UInt8 = 0x11
    /// Program Blackout Override (0x18).
    public static let programBlackoutOverride: UInt8 = 0x18
    /// Break Start (0x22).
    public static let breakStart: UInt8 = 0x22
    /// Break End (0x23).
    public static let breakEnd: UInt8 = 0x23
    /// Provider Advertisement Start (0x30).
    public static let providerAdvertisementStart: UInt8 = 0x30
    /// Distributor Advertisement Start (0x32).
    public static let distributorAdvertisementStart: UInt8 = 0x32
    /// Provider Placement Opportunity Start (0x34).
    public static let providerPlacementOpportunityStart: UInt8 = 0x34
    /// Distributor Placement Opportunity Start (0x36).
    public static let distributorPlacementOpportunityStart: UInt8 = 0x36

    /// The ends of the start/end pairs (program, chapter, break, advertisement, placement
    /// opportunities, overlays, unscheduled events, network...): an odd id from 0x11 on,
    /// except 0x19 (program start, in progress) and the unpaired ids before 0x20.
    public static func isEnd(_ id: UInt8) -> Bool {
        id == programEnd || (id >= 0x21 && id % 2 == 1)
    }
}
