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

    /// The event's name, for logs and JSON.
    public var name: String {
        switch self {
        case .entryStarted: "entryStarted"
        case .entryEnded: "entryEnded"
        case .adBreakStarted: "adBreakStarted"
        case .adBreakEnded: "adBreakEnded"
        case .entryFailed: "entryFailed"
        case .timelineChanged: "timelineChanged"
        }
    }
}

/// The channel's format and how entries are turned into media.
public struct PlayoutOptions: Sendable, Equatable {
    /// Encode mode (the default): every entry is decoded and encoded at this size, frame rate
    /// and sample rate, so splices are frame-exact and the codec configuration never changes.
    public var width = 1280
    /// Output height in pixels.
    public var height = 720
    /// Output frames per second.
    public var frameRate = 25.0
    /// Output audio samples per second.
    public var sampleRate = 44_100
    /// Copy mode: entries are sent as they are (H.264/AAC; other codecs are encoded); cuts fall
    /// on keyframes and a new sequence header goes out when a clip's configuration differs.
    public var copy = false
    /// The image that stands in for a failed entry (with silence); nil: black.
    public var slateImage: String?
    /// Bitrates, GOP, preset of the encoders.
    public var media = MediaSourceOptions()

    /// Creates the default options.
    public init() {}
}
