/// What a channel plays: content clips laid end to end (the main content timeline), ads placed
/// on it, and how often the main content repeats. The terms are the Media Player Framework's
/// (`appendContentClip`, `scheduleClip` with `AdInfo`): times are seconds, `in`/`out` are the
/// clip's `clipBeginMediaTime`/`clipEndMediaTime`.
///
/// The JSON form (`livepush playout SCHEDULE.json`):
/// ```json
/// { "loop": 2,
///   "content": [ {"id": "a", "source": "A.mp4", "in": 2, "out": 8} ],
///   "ads": [ {"id": "y1", "source": "Y.mp4", "type": "midroll", "at": 4, "in": 0, "out": 2, "deleteAfterPlay": true},
///            {"id": "x2", "source": "X.mp4", "type": "pod", "appendTo": "y1", "in": 0, "out": 1} ] }
/// ```
/// `loop` is a count (default 1) or `"forever"`; `deleteAfterPlay` defaults to false (the ad
/// plays every time its point comes around). `"blackouts": [{"at": 30, "duration": 10},
/// {"start": "2026-11-23T20:00:00Z", "duration": 3600}]` black the channel out (`at`: seconds of
/// the stream; `start`: a wall-clock time). ``validate()`` refuses a bad schedule before
/// anything is pushed, naming the entry and the field.
public struct PlayoutSchedule: Sendable, Equatable {
    /// A stretch of one source.
    public struct Clip: Sendable, Equatable {
        /// The clip's id, unique in the schedule.
        public var id: String
        /// A file path (relative paths are resolved by whoever loads the schedule).
        public var source: String
        /// Where the clip starts, seconds of the source.
        public var inPoint: Double
        /// Where the clip ends, seconds of the source.
        public var outPoint: Double
        /// Title, description, category and episode, for the programme guide and the as-run log.
        public var programme = ProgrammeInfo()
        /// Drawn over the clip while it plays, and only then (at most ``Overlay/maxPerEntry``);
        /// JSON `"overlays": [{"id", "image" | "text" | "clock", "x", "y", ...}]`.
        public var overlays: [Overlay] = []

        /// Creates a clip.
        public init(id: String, source: String, in inPoint: Double, out outPoint: Double) {
            self.id = id
            self.source = source
            self.inPoint = inPoint
            self.outPoint = outPoint
        }

        /// Length in seconds.
        public var duration: Double { outPoint - inPoint }
    }

    /// Where an ad plays.
    public enum AdType: String, Sendable, Equatable, CaseIterable {
        /// Before the content.
        case preroll
        /// At a point of the content (``Ad/at``).
        case midroll
        /// After the content.
        case postroll
        /// After another ad (``Ad/appendTo``).
        case pod
    }

    /// An ad and where it plays.
    public struct Ad: Sendable, Equatable {
        /// What plays.
        public var clip: Clip
        /// Where it plays.
        public var type: AdType
        /// Midroll: the point of the main content timeline, seconds.
        public var at: Double?
        /// Pod: the ad this one follows.
        public var appendTo: String?
        /// Whether the ad leaves the schedule once played.
        public var deleteAfterPlay: Bool

        /// Creates an ad.
        public init(clip: Clip, type: AdType, at: Double? = nil, appendTo: String? = nil, deleteAfterPlay: Bool = false) {
            self.clip = clip
            self.type = type
            self.at = at
            self.appendTo = appendTo
            self.deleteAfterPlay = deleteAfterPlay
        }
    }

    /// How often the schedule plays.
    public enum Loop: Sendable, Equatable {
        /// This many times.
        case times(Int)
        /// Until stopped.
        case forever
    }

    /// How often the schedule plays.
    public var loop: Loop
    /// The content clips, in order.
    public var content: [Clip]
    /// The ads.
    public var ads: [Ad]
    /// Blackouts known in advance: the alternate content (else a black slate) instead of the
    /// channel, whose timeline runs on underneath (see ``BreakOptions``).
    public var blackouts: [BlackoutWindow]

    /// Creates a schedule.
    public init(loop: Loop = .times(1), content: [Clip], ads: [Ad] = [], blackouts: [BlackoutWindow] = []) {
        self.loop = loop
        self.content = content
        self.ads = ads
        self.blackouts = blackouts
    }

    /// The main content timeline's length: the clips' (out − in) end to end.
    public var mainDuration: Double { content.reduce(0) { $0 + $1.duration } }

    /// Throws `scheduleInvalid` naming the first bad entry and field.
    public func validate() throws(LivePushError) {
        func refuse(_ id: String, _ field: String, _ why: String) -> LivePushError {
            LivePushError(.scheduleInvalid, "entry \"\(id)\", field \"\(field)\": \(why)")
        }
        if case .times(let n) = loop, n < 1 { throw refuse("schedule", "loop", "must be at least 1 or \"forever\"") }
        guard !content.isEmpty else { throw refuse("schedule", "content", "needs at least one clip") }
        var ids = Set<String>()
        for clip in content + ads.map(\.clip) {
            guard !clip.id.isEmpty else { throw refuse("?", "id", "is empty") }
            guard ids.insert(clip.id).inserted else { throw refuse(clip.id, "id", "is used twice") }
            guard !clip.source.isEmpty else { throw refuse(clip.id, "source", "is empty") }
            guard Self.isTime(clip.inPoint) else { throw refuse(clip.id, "in", "must be 0 or more") }
            guard Self.isTime(clip.outPoint), clip.inPoint < clip.outPoint else {
                throw refuse(clip.id, "out", "must be after in (\(clip.inPoint)) and at most \(Int(Self.maxSeconds)) seconds")
            }
        }
        let main = mainDuration
        for ad in ads {
            switch ad.type {
            case .midroll:
                guard let at = ad.at, at.isFinite else { throw refuse(ad.clip.id, "at", "is required for a midroll") }
                guard at >= 0, at <= main else {
                    throw refuse(ad.clip.id, "at", "\(at) s is beyond the main content (\(main) s)")
                }
            case .pod:
                guard let parent = ad.appendTo else { throw refuse(ad.clip.id, "appendTo", "is required for a pod") }
                guard ads.contains(where: { $0.clip.id == parent }) else {
                    throw refuse(ad.clip.id, "appendTo", "names no ad (\"\(parent)\")")
                }
                guard parent != ad.clip.id else { throw refuse(ad.clip.id, "appendTo", "names the ad itself") }
            case .preroll, .postroll:
                break
            }
        }
        // A pod chain must reach a preroll, midroll or postroll (not go round in a circle).
        for ad in ads where ad.type == .pod {
            var seen: Set<String> = [ad.clip.id]
            var current = ad
            while current.type == .pod, let parent = ads.first(where: { $0.clip.id == current.appendTo }) {
                guard seen.insert(parent.clip.id).inserted else { throw refuse(ad.clip.id, "appendTo", "pods form a circle") }
                current = parent
            }
        }
    }
}
