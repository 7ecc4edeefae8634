/// One channel of `livepush channels`: what it plays and where it goes.
public struct ChannelSpec: Sendable, Equatable {
    /// What a channel plays.
    public enum Source: Sendable, Equatable {
        /// A media file, looped as asked (a 24/7 channel: `.forever`).
        case file(path: String, loop: PushConfig.Looping)
        /// A playout schedule (JSON, see ``PlayoutSchedule``).
        case playout(schedulePath: String)
        /// A live feed's URL, with failover (``liveInput``; see `FailoverInput`).
        case live(url: String)
    }

    /// `[A-Za-z0-9_.-]`, 1 to 64 characters: it names the channel in the API, metrics and logs.
    public var id: String
    /// What the channel plays.
    public var source: Source
    /// RTMP URLs (each an output of its own; at least one).
    public var outputs: [String]
    /// Outputs with a video size and bitrate of their own, by position in ``outputs``
    /// (``PushConfig/outputVideo``): the first rendition of each output's ladder.
    public var outputVideo: [Int: VideoRendition] {
        get { outputVideoLadders.compactMapValues(\.first) }
        set { outputVideoLadders = newValue.mapValues { [$0] } }
    }
    /// Each output's ladder (``PushConfig/outputVideoLadders``): an output object's `"video"`
    /// as a list.
    public var outputVideoLadders: [Int: [VideoRendition]] = [:]
    /// A local FLV recording of what is pushed, beside the outputs.
    public var record: String?
    /// Alternate content for blackouts (playout channels' control, cue-driven breaks).
    public var alternate: String?
    /// Started with the process (else on a start request).
    public var autostart: Bool
    /// A live input's backup, fill and timeout (`"backup"`, `"inputLoss"`, `"inputTimeout"`).
    public var liveInput = LiveInputOptions()
    /// A playout channel's programme guide file (XMLTV, `"epg"`), rewritten as its schedule changes.
    public var epg: String?
    /// A playout channel's as-run log file (JSON lines, `"asRun"`), appended as items air.
    public var asRun: String?
    /// Live loudness normalisation (`"loudness"`; ``MediaSourceOptions/loudness``); nil: the
    /// sound is untouched.
    public var loudness: LoudnessTarget?

    /// Creates a channel's specification.
    public init(id: String, source: Source, outputs: [String], outputVideo: [Int: VideoRendition] = [:],
                record: String? = nil, alternate: String? = nil, autostart: Bool = true) {
        self.id = id
        self.source = source
        self.outputs = outputs
        outputVideoLadders = outputVideo.mapValues { [$0] }
        self.record = record
        self.alternate = alternate
        self.autostart = autostart
    }

    static func isValidID(_ id: String) -> Bool {
        (1...64).contains(id.count) && id.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "_.-".unicodeScalars.contains($0)
        }
    }
}
