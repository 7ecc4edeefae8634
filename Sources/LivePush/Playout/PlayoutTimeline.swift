/// One item the channel plays: a stretch of one source.
public struct PlayoutEntry: Sendable, Equatable {
    /// What an entry is.
    public enum Kind: String, Sendable, Equatable {
        /// A content clip.
        case content
        /// An ad that opens a break.
        case ad
        /// An ad that follows another.
        case pod
        /// The slate, standing in for an entry that failed.
        case slate
    }

    /// The clip's id (content, ad or pod); for a slate, the id of the entry it stands in for.
    public var id: String
    /// What the entry is.
    public var kind: Kind
    /// The file or URL it plays.
    public var source: String
    /// Seconds of the source.
    public var inPoint: Double
    /// Where it ends, seconds of the source.
    public var outPoint: Double
    /// The ad break the entry belongs to (the id of the ad that opened it), nil for content.
    public var adBreak: String?
    /// Title, description, category and episode of the clip the entry plays.
    public var programme = ProgrammeInfo()

    /// Creates an entry.
    public init(id: String, kind: Kind, source: String, in inPoint: Double, out outPoint: Double, adBreak: String? = nil) {
        self.id = id
        self.kind = kind
        self.source = source
        self.inPoint = inPoint
        self.outPoint = outPoint
        self.adBreak = adBreak
    }

    /// Length in seconds.
    public var duration: Double { outPoint - inPoint }

    /// The entry's title: its clip's, else the clip's file name.
    public var title: String { programme.title(for: source) }

    /// The entry that plays `clip` (all of it).
    init(_ clip: PlayoutSchedule.Clip, kind: Kind, adBreak: String? = nil) {
        self.init(id: clip.id, kind: kind, source: clip.source, in: clip.inPoint, out: clip.outPoint, adBreak: adBreak)
        programme = clip.programme
    }
}

/// The channel's running order, as a pure state machine: it answers "what plays next?" and
/// takes the schedule's changes. Nothing here opens a file or knows the time of day; the
/// playout driver asks ``next()`` whenever an entry ends (or is skipped).
///
/// The rules (the Media Player Framework's, on the push side):
/// - Content clips play in order; their (out − in) spans make the main content timeline, which
///   repeats `loop` times.
/// - Prerolls play before each pass of the main content, midrolls when the main content reaches
///   their `at`, postrolls after the last pass. A pod plays right after the ad it is appended
///   to. After an ad break the content resumes exactly where it paused.
/// - An ad with `deleteAfterPlay` plays once and leaves the timeline; otherwise it plays every
///   time its point comes around. Pods follow the same rule.
/// - ``scheduleNow(_:interruptingAfter:)`` inserts a clip at the current position: into the
///   running break when an ad plays, else between the two halves of the content.
package struct PlayoutTimeline: Sendable {
    private var schedule: PlayoutSchedule
    private var pass = 1
    private var passStarted = false
    /// Position on the main content timeline of the current pass, seconds.
    private var mainTime: Double = 0
    /// Midrolls already played in this pass.
    private var playedThisPass: Set<String> = []
    /// Entries due before anything else (an ad break, scheduled-now clips).
    private var queue: [PlayoutEntry] = []
    private var finished = false
    /// The entry last handed out, and where content entries began on the main timeline.
    private(set) var current: PlayoutEntry?
    private var currentMainStart: Double?

    /// Creates the timeline of a schedule; throws `scheduleInvalid` when it is not valid.
    package init(schedule: PlayoutSchedule) throws(LivePushError) {
        try schedule.validate()
        self.schedule = schedule
    }

    /// The length of the running break `name` after the current entry: the entries queued in it.
    package func remainingInBreak(_ name: String) -> Double {
        queue.prefix { $0.adBreak == name }.reduce(0) { $0 + $1.duration }
    }

    /// The break that starts right after the current entry, with its whole length (a pod is one break).
    package func upcomingBreak() -> (name: String, duration: Double)? {
        var copy = self
        guard let first = copy.next(), let name = first.adBreak, name != current?.adBreak else { return nil }
        var total = first.duration
        while let entry = copy.peek(), entry.adBreak == name {
            total += entry.duration
            _ = copy.next()
        }
        return (name, total)
    }

    /// What ``next()`` would return now, without moving on.
    package func peek() -> PlayoutEntry? {
        var copy = self
        return copy.next()
    }

    /// The next entry to play, or nil when the timeline is over.
    package mutating func next() -> PlayoutEntry? {
        let entry = pick()
        current = entry
        if let entry, entry.kind == .ad || entry.kind == .pod { played(adID: entry.id) }
        return entry
    }

    private mutating func pick() -> PlayoutEntry? {
        currentMainStart = nil
        while true {
            if !queue.isEmpty { return queue.removeFirst() }
            if finished { return nil }
            if !passStarted {
                passStarted = true
                queueBreak(of: schedule.ads.filter { $0.type == .preroll }, named: "preroll")
                continue
            }
            // Midrolls due at this point of the main content (each once per pass).
            let due = schedule.ads.filter { $0.type == .midroll && !playedThisPass.contains($0.clip.id) && ($0.at ?? 0) <= mainTime + 1e-9 }
            if !due.isEmpty {
                for ad in due { playedThisPass.insert(ad.clip.id) }
                queueBreak(of: due, named: due[0].clip.id)
                continue
            }
            if let content = contentEntry() { return content }
            // The pass is over.
            if case .times(let total) = schedule.loop, pass >= total {
                finished = true
                queueBreak(of: schedule.ads.filter { $0.type == .postroll }, named: "postroll")
                continue
            }
            pass += 1
            passStarted = false
            mainTime = 0
            playedThisPass = []
        }
    }

    /// The content from the current position up to the next midroll point or the clip's end.
    private mutating func contentEntry() -> PlayoutEntry? {
        var clipStart: Double = 0
        for clip in schedule.content {
            let clipEnd = clipStart + clip.duration
            defer { clipStart = clipEnd }
            guard mainTime < clipEnd - 1e-9 else { continue }
            let nextBreak = schedule.ads
                .filter { $0.type == .midroll && !playedThisPass.contains($0.clip.id) }
                .compactMap(\.at).filter { $0 > mainTime + 1e-9 }.min() ?? .infinity
            let end = min(clipEnd, nextBreak)
            var entry = PlayoutEntry(id: clip.id, kind: .content, source: clip.source,
                                     in: clip.inPoint + (mainTime - clipStart), out: clip.inPoint + (end - clipStart))
            entry.programme = clip.programme
            currentMainStart = mainTime
            mainTime = end
            return entry
        }
        return nil
    }

    /// Queues `ads` and, after each, the pods appended to it (recursively), as one break.
    private mutating func queueBreak(of ads: [PlayoutSchedule.Ad], named name: String) {
        func add(_ ad: PlayoutSchedule.Ad, kind: PlayoutEntry.Kind) {
            queue.append(PlayoutEntry(ad.clip, kind: kind, adBreak: name))
            for pod in schedule.ads where pod.type == .pod && pod.appendTo == ad.clip.id { add(pod, kind: .pod) }
        }
        for ad in ads { add(ad, kind: .ad) }
    }

    /// One-time ads leave the timeline once they start playing.
    private mutating func played(adID: String) {
        schedule.ads.removeAll { $0.clip.id == adID && $0.deleteAfterPlay }
    }

    // MARK: Changes while the channel runs

    /// Inserts `clip` at the current position. When an ad plays it joins that break (after the
    /// entries already queued in it). When content plays, the content is cut after
    /// `interruptingAfter` seconds of the current entry; the clip plays now and the content
    /// resumes from the cut. Returns whether the driver must end the current entry now.
    package mutating func scheduleNow(_ clip: PlayoutSchedule.Clip, interruptingAfter played: Double) -> Bool {
        if let current, current.kind == .ad || current.kind == .pod || (current.kind == .slate && current.adBreak != nil) {
            let position = queue.firstIndex { $0.adBreak != current.adBreak } ?? queue.count
            queue.insert(PlayoutEntry(clip, kind: .pod, adBreak: current.adBreak), at: position)
            return false
        }
        if let current, current.kind == .content, let start = currentMainStart {
            mainTime = start + min(max(0, played), current.duration)
        }
        // Several clips scheduled during the same content play in the order they came, as one break.
        let position = queue.firstIndex { $0.adBreak != Self.nowBreak } ?? queue.count
        queue.insert(PlayoutEntry(clip, kind: .ad, adBreak: Self.nowBreak), at: position)
        return true
    }

    /// The ad break that clips scheduled now during content form.
    package static let nowBreak = "now"

    /// Appends a clip to the main content (it plays in this pass if the pass has not ended).
    package mutating func appendContent(_ clip: PlayoutSchedule.Clip) throws(LivePushError) {
        var changed = schedule
        changed.content.append(clip)
        try changed.validate()
        schedule = changed
        if finished && queue.isEmpty { finished = false; passStarted = true }
    }

    /// The schedule as it stands (one-time ads that played are gone).
    package var remainingSchedule: PlayoutSchedule { schedule }
}
