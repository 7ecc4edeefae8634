import Synchronization

/// The playout driver: asks the ``PlayoutTimeline`` what plays next, opens it (a ``ClipInput``
/// at the channel's format, or a slate when it cannot be played) and reports the timeline's
/// events. The producer calls it at every end of an entry; the app's controls (schedule now,
/// skip, append) reach the timeline under its lock.
///
/// Opening a file and its encoders takes tens of milliseconds, which a real-time channel cannot
/// spend between two frames, and a pacing thread shared by other channels must never wait for:
/// the entry after the one on air (and a clip scheduled now) is opened ahead on the opening
/// pool, and the producer takes it when its turn comes. When the timeline changed since (an
/// entry appended, scheduled now), what plays next opens then, on the same pool, and the
/// producer is woken once it is open.
///
/// The entry on air is the producer's (``InputSequence``): the program keeps only its state,
/// under its lock, and is read by the app's controls from any thread.
final class PlayoutProgram: InputSequence, Sendable {
    private struct State {
        var timeline: PlayoutTimeline
        var current: PlayoutEntry?
        /// Scheduled now while content plays: inserted when the producer ends the content, so the
        /// cut is where the content really stopped.
        var pendingNow: [PlayoutSchedule.Clip] = []
        /// The entry expected next, being opened ahead.
        var prepared: (entry: PlayoutEntry, input: OpeningInput)?
        /// Ends the entry on air now (set by the pusher: a ``EngineCommand/skip``).
        var requestSkip: @Sendable () -> Void = {}
        /// The break of the entry before the current one.
        var previousBreak: String?
        /// splice_event_ids: of the break on air, of one announced ahead, the next to hand out.
        var openBreakID: UInt32?
        var announced: (name: String, id: UInt32)?
        var nextEventID: UInt32 = 1
        /// The schedule as planned (appended clips in, played one-time ads kept): the guide's.
        var planned: PlayoutSchedule
        /// Each clip's overlays (``PlayoutSchedule/Clip/overlays``), by id, rendered ahead.
        var overlays: [String: [Overlay]] = [:]
    }

    private let state: Mutex<State>
    private let options: PlayoutOptions
    /// The push's stages: an entry opened ahead only keeps the reference, which the producer
    /// uses once the entry is on air (an input never runs them off the producer).
    private let stages: FrameStages
    private let report: @Sendable (PlayoutEvent) -> Void
    /// The as-run log's side, fed with what the switcher does.
    private let asRun: PlayoutAsRun
    /// The guide's start before the channel's.
    private let wallClock: any WallClock
    /// How far ahead a break known in advance is announced, µs.
    private let cuePreroll: Int64
    /// Whether the schedule has live entries (known at its start): see ``InputSequence/inputsMayWait``.
    let inputsMayWait: Bool
    /// Ends the entry on air now (set by the pusher: a ``EngineCommand/skip``).
    var requestSkip: @Sendable () -> Void {
        get { state.withLock { $0.requestSkip } }
        set { state.withLock { $0.requestSkip = newValue } }
    }

    init(schedule: PlayoutSchedule, options: PlayoutOptions, stages: FrameStages, cuePreroll: Duration = .seconds(4),
         wallClock: any WallClock = SystemWallClock(), report: @escaping @Sendable (PlayoutEvent) -> Void) throws(LivePushError) {
        var initial = State(timeline: try PlayoutTimeline(schedule: schedule), planned: schedule)
        // Rendered now, so that a bad logo fails the start and the producer never reads a file.
        for clip in schedule.content + schedule.ads.map(\.clip) where !clip.overlays.isEmpty {
            try stages.overlays.prepareEntryOverlays(clip.overlays)
            initial.overlays[clip.id] = clip.overlays
        }
        state = Mutex(initial)
        self.wallClock = wallClock
        asRun = PlayoutAsRun(wallClock: wallClock, report: report)
        inputsMayWait = (schedule.content + schedule.ads.map(\.clip)).contains { FFInputPolicy.liveProtocols(for: $0.source) != nil }
        self.cuePreroll = cuePreroll.nanoseconds / 1000
        self.options = options
        self.stages = stages
        self.report = report
    }

    /// The encoders' options at the channel's format.
    private static func mediaOptions(_ options: PlayoutOptions) -> MediaSourceOptions {
        var media = options.media
        if !options.copy {
            media.outputSize = VideoSize(width: options.width, height: options.height)
            media.frameRate = options.frameRate
            media.audioSampleRate = options.sampleRate
            media.adaptiveBitrate = false
        }
        return media
    }

    // MARK: InputSequence (the producer thread)

    func nextInputIsReady(after ended: any MediaInput, whenReady: @escaping @Sendable () -> Void) -> Bool {
        let played = (ended as? any PlayoutEntryInput)?.played ?? 0
        let opening = state.withLock { state -> OpeningInput? in
            // Scheduled now while content played: the cut is where it really stopped.
            for clip in state.pendingNow { _ = state.timeline.scheduleNow(clip, interruptingAfter: played) }
            state.pendingNow = []
            guard let upcoming = state.timeline.peek() else { return nil }
            if state.prepared?.entry != upcoming { state.prepared = (upcoming, startOpening(upcoming)) }
            return state.prepared?.input
        }
        return opening?.isReady(whenReady: whenReady) ?? true
    }

    func nextInput() -> (any MediaInput)? {
        let (ended, next) = state.withLock { state -> (PlayoutEntry?, PlayoutEntry?) in
            let ended = state.current
            state.previousBreak = ended?.adBreak
            // Not asked first (the channel's first entry): nothing played before it.
            for clip in state.pendingNow { _ = state.timeline.scheduleNow(clip, interruptingAfter: 0) }
            state.pendingNow = []
            state.current = state.timeline.next()
            return (ended, state.current)
        }
        if let ended {
            report(.entryEnded(ended))
            if let name = ended.adBreak, next?.adBreak != name { report(.adBreakEnded(name)) }
        }
        // The entry's overlays from its first picture on (none: the last entry's go).
        stages.overlays.enterEntry(next.map { entry in state.withLock { $0.overlays[entry.id] ?? [] } } ?? [])
        guard let next else { return nil }
        if let name = next.adBreak, ended?.adBreak != name { report(.adBreakStarted(name)) }
        report(.entryStarted(next))
        let ahead = state.withLock { state -> OpeningInput? in
            defer { state.prepared = nil }
            return state.prepared.flatMap { $0.entry == next ? $0.input : nil }
        }
        // Open ahead (nextInputIsReady said so); else the first entry, opened on the caller's
        // thread (the app's, at the start).
        let opened = ahead?.take() ?? open(next)
        prepareNext()
        let input: (any MediaInput)?
        switch opened {
        case .success(let opened): input = opened
        case .failure(let error): input = slate(for: next, seconds: next.duration, because: error)
        }
        // A live feed's URL goes into the log without its stream key and secrets.
        let shown = next.source.contains("://") ? Redaction.redactStreamKey(next.source) : next.source
        var item = AsRunLedger.Item(id: next.id, kind: Self.asRunKind(next.kind), title: next.title, source: shown)
        if case .failure = opened { item.kind = .slate }
        asRun.picked(item)
        return input
    }

    private static func asRunKind(_ kind: PlayoutEntry.Kind) -> AsRunRecord.Kind {
        switch kind {
        case .content: .content
        case .ad: .ad
        case .pod: .pod
        case .slate: .slate
        }
    }

    /// Opens `entry` on the opening workers, shared by every channel and bounded: a live
    /// entry's probe can wait its whole timeout, and GCD's concurrent queue started a thread per
    /// such wait.
    private func startOpening(_ entry: PlayoutEntry) -> OpeningInput {
        let (options, stages, report, switched) = (options, stages, report, liveSourceSwitched)
        return OpeningInput.start { () throws(LivePushError) in
            try Self.open(entry, options: options, stages: stages, report: report, switched: switched).get()
        }
    }

    private func open(_ entry: PlayoutEntry) -> Result<any MediaInput, LivePushError> {
        Self.open(entry, options: options, stages: stages, report: report, switched: liveSourceSwitched)
    }

    /// What a live entry's failover tells the as-run log: the entry, the source now on air, and
    /// where in the entry (seconds) it switched.
    private typealias LiveSwitch = @Sendable (PlayoutEntry, LiveInputSource, Double) -> Void

    private var liveSourceSwitched: LiveSwitch {
        { [asRun] entry, source, played in
            let standIn = source == .primary ? nil
                : AsRunLedger.Item(id: entry.id, kind: source == .backup ? .backup : .slate, title: entry.title, source: source.rawValue)
            asRun.liveSwitched(entryID: entry.id, to: standIn, at: played)
        }
    }

    private static func open(_ entry: PlayoutEntry, options: PlayoutOptions, stages: FrameStages,
                             report: @escaping @Sendable (PlayoutEvent) -> Void,
                             switched: @escaping LiveSwitch) -> Result<any MediaInput, LivePushError> {
        do throws(LivePushError) {
            if FFInputPolicy.liveProtocols(for: entry.source) != nil {
                return .success(try openLive(entry, options: options, stages: stages, report: report, switched: switched))
            }
            let input = try ClipInput(path: entry.source, in: entry.inPoint, out: entry.outPoint, options: mediaOptions(options),
                                      copy: options.copy, stages: stages)
            guard input.info.video != nil else { throw LivePushError(.noUsableStream, "\(entry.source): no video track") }
            return .success(input)
        } catch {
            return .failure(error)
        }
    }

    /// A live entry: the feed at the channel's format for the entry's length. A feed that does not
    /// answer fails the entry (the slate fills its slot, as for a file); one that drops mid-way is
    /// filled, then replaced by the slate, while it is retried.
    private static func openLive(_ entry: PlayoutEntry, options: PlayoutOptions, stages: FrameStages,
                                 report: @escaping @Sendable (PlayoutEvent) -> Void,
                                 switched: @escaping LiveSwitch) throws(LivePushError) -> FailoverInput {
        var live = LiveInputOptions()
        live.slateImage = options.slateImage
        let handle = LiveEntryHandle()
        let input = try FailoverInput(url: entry.source, options: live, media: mediaOptions(options),
                                      duration: MediaTime(seconds: entry.duration).duration, requiresFeed: true) { event in
            switch event {
            case .lost(let error):
                report(.entryFailed(entry, LivePushError(.playoutEntryFailed, "entry \"\(entry.id)\": \(error.message)")))
            case .switched(let source):
                // Told while the input makes the slot that shows `source`: where it switched.
                if let played = handle.played { switched(entry, source, played) }
            default:
                break
            }
        }
        handle.attach(input)
        return input
    }

    /// Starts opening what the timeline would play next (or `entry`), unless it is already.
    private func prepareNext(_ entry: PlayoutEntry? = nil) {
        state.withLock { state in
            guard let upcoming = entry ?? state.timeline.peek(), state.prepared?.entry != upcoming else { return }
            state.prepared = (upcoming, startOpening(upcoming))
        }
    }

    /// At an entry's start: the return from the break before it, the cue-out of the break it
    /// opens (with the whole break's length), and the announcement of the next break, ahead.
    func cues(forInputStartingAt start: Int64) -> [AdCue] {
        var eventID: UInt32?
        let cues = state.withLock { state -> [AdCue] in
            // The as-run line's event id: the break's, once its cue-out is made below.
            defer { eventID = state.current?.adBreak != nil ? state.openBreakID : nil }
            guard let entry = state.current else { return [] }
            var cues: [AdCue] = []
            func newID() -> UInt32 {
                defer { state.nextEventID &+= 1 }
                return state.nextEventID
            }
            if let ended = state.previousBreak, ended != entry.adBreak {
                cues.append(AdCue(eventID: state.openBreakID ?? newID(), outOfNetwork: false, spliceTime: start,
                                  duration: nil, sendAt: start))
                state.openBreakID = nil
            }
            if let name = entry.adBreak, name != state.previousBreak {
                let id = state.announced?.name == name ? state.announced!.id : newID()
                state.announced = nil
                state.openBreakID = id
                let length = entry.duration + state.timeline.remainingInBreak(name)
                cues.append(AdCue(eventID: id, outOfNetwork: true, spliceTime: start,
                                  duration: MediaTime(seconds: length).microseconds, sendAt: start))
            }
            if let upcoming = state.timeline.upcomingBreak() {
                let id = newID()
                state.announced = (upcoming.name, id)
                let splice = start + MediaTime(seconds: entry.duration).microseconds
                cues.append(AdCue(eventID: id, outOfNetwork: true, spliceTime: splice,
                                  duration: MediaTime(seconds: upcoming.duration).microseconds, sendAt: max(start, splice - cuePreroll)))
            }
            return cues
        }
        asRun.onAir(at: start, eventID: eventID)
        return cues
    }

    // The as-run log's side of what the switcher does.
    func outputStarted(at time: Int64) { asRun.outputStarted(at: time) }
    func breakStarted(_ opportunity: PlacementOpportunity, fill: String, source: String?, at time: Int64) {
        asRun.breakStarted(opportunity, fill: fill, source: source, at: time)
    }
    func breakEnded(at time: Int64) { asRun.breakEnded(at: time) }
    func sequenceEnded(at time: Int64) { asRun.finished(at: time) }

    func inputSkipped(_ input: any MediaInput, unsent: [MediaPacket]) {
        (input as? any PlayoutEntryInput)?.didNotSend(unsent)
    }

    func inputFailed(_ input: any MediaInput, _ error: LivePushError) -> (any MediaInput)? {
        let played = (input as? any PlayoutEntryInput)?.played ?? 0
        guard let entry = state.withLock({ $0.current }) else { return nil }
        // The slate goes on air where the entry stopped: its own time plus what it played.
        asRun.failed(afterPlaying: played, slate: AsRunLedger.Item(id: entry.id, kind: .slate, title: entry.title, source: "slate"))
        return slate(for: entry, seconds: max(0, entry.duration - played), because: error)
    }

    /// Still image and silence at the channel's format for `seconds`: the channel never goes off air.
    private func slate(for entry: PlayoutEntry, seconds: Double, because error: LivePushError) -> (any MediaInput)? {
        report(.entryFailed(entry, LivePushError(.playoutEntryFailed, "entry \"\(entry.id)\" (\(entry.source)): \(error.message)")))
        do {
            return try StillInput(image: options.slateImage, video: .init(width: options.width, height: options.height,
                                                                          frameRate: options.frameRate),
                                  audio: .init(sampleRate: options.sampleRate, channels: 2),
                                  duration: MediaTime(seconds: seconds).duration, options: Self.mediaOptions(options),
                                  blackWithoutImage: true)
        } catch {
            return nil
        }
    }

    // MARK: Controls (any thread)

    /// Plays `clip` at the current position (see ``PlayoutTimeline/scheduleNow(_:interruptingAfter:)``).
    func scheduleNow(_ clip: PlayoutSchedule.Clip) {
        // A clip whose overlays cannot be rendered still plays, without them.
        let overlays = (try? stages.overlays.prepareEntryOverlays(clip.overlays)) != nil ? clip.overlays : []
        let cutsContent = state.withLock { state -> Bool in
            if !overlays.isEmpty { state.overlays[clip.id] = overlays }
            if state.current?.kind == .content {
                state.pendingNow.append(clip)
                return true
            }
            _ = state.timeline.scheduleNow(clip, interruptingAfter: 0)
            return false
        }
        report(.timelineChanged)
        if cutsContent {
            prepareNext(PlayoutEntry(clip, kind: .ad, adBreak: PlayoutTimeline.nowBreak))
            state.withLock { $0.requestSkip }()
        } else {
            // What follows the entry on air may have changed: it opens now, while that entry plays.
            prepareNext()
        }
    }

    func appendContent(_ clip: PlayoutSchedule.Clip) throws(LivePushError) {
        try stages.overlays.prepareEntryOverlays(clip.overlays)
        try state.withLock { state throws(LivePushError) in
            try state.timeline.appendContent(clip)
            state.planned.content.append(clip)
            if !clip.overlays.isEmpty { state.overlays[clip.id] = clip.overlays }
        }
        report(.timelineChanged)
        prepareNext()
    }

    func skip() {
        asRun.skipRequested()
        report(.timelineChanged)
        state.withLock { $0.requestSkip }()
    }

    /// The programme guide (XMLTV) from the channel's start (now, before it started).
    func programmeGuide(channelID: String, displayName: String) -> String {
        let planned = state.withLock { $0.planned }
        let programmes = XMLTVGuide.programmes(of: planned, from: asRun.channelStart ?? wallClock.nowMicroseconds)
        return XMLTVGuide.document(channelID: channelID, displayName: displayName, programmes: programmes)
    }

    /// The entry on air and the schedule as it stands.
    var snapshot: (current: PlayoutEntry?, schedule: PlayoutSchedule) {
        state.withLock { ($0.current, $0.timeline.remainingSchedule) }
    }
}
