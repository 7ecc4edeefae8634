extension LivePusher {
    /// Plays a schedule as one continuous stream: content clips, pre/mid/post-roll ads and
    /// pods, looped as the schedule says (see ``PlayoutSchedule``).
    /// Each entry is opened when its turn comes; one that cannot be played is replaced by the
    /// slate for its duration (``PlayoutEvent/entryFailed(_:_:)``) and the channel goes on.
    /// Throws `scheduleInvalid` before anything is pushed when the schedule is not valid.
    /// Returns the controls of the running timeline.
    @discardableResult
    public func start(playout schedule: PlayoutSchedule, options: PlayoutOptions = PlayoutOptions(),
                      urls: [String]) throws(LivePushError) -> PlayoutControl {
        try checkCanStart()
        let pushURLs = try Self.parse(urls)
        var options = options
        // The push's loudness stage normalises every entry: each must yield raw sound, copied
        // AAC (copy mode) included.
        if options.media.loudness == nil { options.media.loudness = config.media.loudness }
        let stages = makeStages()
        let program = try PlayoutProgram(schedule: schedule, options: options, stages: stages,
                                         cuePreroll: config.cuePreroll, wallClock: config.wallClock) { [weak self] event in
            self?.emit(.playout(event))
        }
        program.requestSkip = { [weak self] in self?.runningPush?.send(.skip) }
        guard let first = program.nextInput() else {
            throw LivePushError(.scheduleInvalid, "the schedule plays nothing")
        }
        let breaks = try makeBreakSetup(for: first.info, path: nil, stages: stages, blackouts: schedule.blackouts)
        // Copy mode: what is not copied (slates, live entries, clips of other codecs) is encoded
        // once, at the channel's format and with its options, whatever the first entry's size.
        let channel = options.copy ? try VideoEncoderSettings(width: options.width, height: options.height,
                                                              frameRate: options.frameRate, options: options.media) : nil
        try start(InputAndStages(input: first, stages: stages, breaks: breaks), urls: pushURLs, sequence: program, channel: channel)
        return PlayoutControl(program: program, overlays: overlayStage) { [weak self] command throws(LivePushError) in
            guard let self else { throw LivePushError(.invalidState, "the channel has ended") }
            switch command {
            case .startBlackout(let duration): try startBlackout(for: duration)
            default: try endBlackout()
            }
        }
    }
}

/// The controls of a running playout channel (``LivePusher/start(playout:options:urls:)``).
/// Safe from any thread.
public final class PlayoutControl: Sendable {
    private let program: PlayoutProgram
    private let blackout: @Sendable (EngineCommand) throws(LivePushError) -> Void
    private let overlayStage: OverlayStage

    init(program: PlayoutProgram, overlays: OverlayStage, blackout: @escaping @Sendable (EngineCommand) throws(LivePushError) -> Void) {
        self.program = program
        self.overlayStage = overlays
        self.blackout = blackout
    }

    /// Blacks the channel out from now: the alternate content (``BreakOptions/alternate``, else
    /// a black slate) plays for `duration` or until ``endBlackout()``, while the timeline runs on
    /// underneath; the stream carries a cue-out and a return.
    public func startBlackout(for duration: Duration? = nil) throws(LivePushError) {
        try blackout(.startBlackout(duration: duration))
    }

    /// Ends the blackout: the timeline comes back where it now stands.
    public func endBlackout() throws(LivePushError) {
        try blackout(.endBlackout)
    }

    /// Plays `clip` now: during content, the content is cut here and resumes after the clip;
    /// during an ad break, the clip joins the break (the seed's "Schedule Now").
    public func scheduleNow(_ clip: PlayoutSchedule.Clip) {
        program.scheduleNow(clip)
    }

    /// Ends the entry on air; the timeline goes on with the next one.
    public func skip() {
        program.skip()
    }

    /// Adds a clip at the end of the main content.
    public func appendContent(_ clip: PlayoutSchedule.Clip) throws(LivePushError) {
        try program.appendContent(clip)
    }

    /// Changes the channel's live overlays, as ``LivePusher/changeOverlay(_:waitingUpTo:)`` does.
    @discardableResult
    public func changeOverlay(_ change: OverlayChange, waitingUpTo timeout: Duration = .seconds(2)) async throws(LivePushError) -> OverlayApplied? {
        try await overlayStage.submit(change).wait(upTo: timeout)
    }

    /// The channel's live overlays (not the entry's).
    public var overlays: [Overlay] { overlayStage.requested }

    /// The entry on air.
    public var currentEntry: PlayoutEntry? { program.snapshot.current }

    /// The schedule as it stands (one-time ads that played are gone, appended clips are in).
    public var schedule: PlayoutSchedule { program.snapshot.schedule }

    /// The channel's programme guide as an XMLTV document: one programme per content clip from
    /// the channel's start (``PlayoutEvent/channelStarted(_:)``; before it, from now), with
    /// the clips appended since. Ads are not listed; clips scheduled now and skips show in
    /// the as-run log (``PlayoutEvent/aired(_:)``), not here.
    public func programmeGuide(channelID: String, displayName: String) -> String {
        program.programmeGuide(channelID: channelID, displayName: displayName)
    }
}
