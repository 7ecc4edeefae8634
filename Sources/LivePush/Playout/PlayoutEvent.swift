import FoundationEssentials

/// What a playout channel reports as its timeline runs (``PushEvent/playout(_:)``).
public enum PlayoutEvent: Sendable, Equatable {
    /// An entry went on air.
    case entryStarted(PlayoutEntry)
    /// An entry ended.
    case entryEnded(PlayoutEntry)
    /// The entries of an ad break (named by the ad that opened it: `preroll`, `postroll`, or a
    /// midroll's id) start and end.
    case adBreakStarted(String)
    /// An ad break's entries ended.
    case adBreakEnded(String)
    /// The entry could not be played (missing, unreadable, failed mid-way, no video): a slate
    /// fills its time (`playoutEntryFailed` carries why).
    case entryFailed(PlayoutEntry, LivePushError)
    /// The running order changed (schedule now, append, skip).
    case timelineChanged
    /// The channel's first frame is due: output time 0 is this wall-clock time (the start its
    /// programme guide and as-run log count from).
    case channelStarted(Date)
    /// An item finished airing: one line of the as-run log (see ``AsRunRecord``).
    case aired(AsRunRecord)

    /// The event's name, for logs and JSON.
    public var name: String {
        switch self {
        case .entryStarted: "entryStarted"
        case .entryEnded: "entryEnded"
        case .adBreakStarted: "adBreakStarted"
        case .adBreakEnded: "adBreakEnded"
        case .entryFailed: "entryFailed"
        case .timelineChanged: "timelineChanged"
        case .channelStarted: "channelStarted"
        case .aired: "aired"
        }
    }
}

