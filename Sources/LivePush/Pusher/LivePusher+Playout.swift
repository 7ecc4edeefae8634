extension LivePusher {
    /// Plays a schedule as one continuous stream: content clips, pre/mid/post-roll ads and
    /// pods, looped as the schedule says (see ``PlayoutSchedule`` and ``PlayoutTimeline``).
    /// Each entry is opened when its turn comes; one that cannot be played is replaced by the
    /// slate for its duration (``PlayoutEvent/entryFailed(_:_:)``) and the channel goes on.
    /// Throws `scheduleInvalid` before anything is pushed when the schedule is not valid.
    /// Returns the controls of the running timeline.
    @discardableResult
    public func start(playout schedule: PlayoutSchedule, options: PlayoutOptions = PlayoutOptions(),
                      urls: [String]) throws(LivePushError) -> PlayoutControl {
        try checkCanStart()
        let pushURLs = try Self.parse(urls)
        let program = try PlayoutProgram(schedule: schedule, options: options, hooks: hooks,
                                         cuePreroll: config.cuePreroll) { [weak self] event in
            self?.emit(.playout(event))
        }
        program.requestSkip = { [weak self] in self?.session.withLock { $0 }?.send(.skip) }
        guard let first = program.nextInput() else {
            throw LivePushError(.scheduleInvalid, "the schedule plays nothing")
        }
        try start(source: UncheckedTransfer(value: first), urls: pushURLs, sequence: program)
        return PlayoutControl(program: program)
    }
}

/// The controls of a running playout channel (``LivePusher/start(playout:options:urls:)``).
/// Safe from any thread.
public final class PlayoutControl: Sendable {
    private let program: PlayoutProgram

    init(program: PlayoutProgram) {
        self.program = program
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

    /// The entry on air.
    public var currentEntry: PlayoutEntry? { program.snapshot.current }

    /// The schedule as it stands (one-time ads that played are gone, appended clips are in).
    public var schedule: PlayoutSchedule { program.snapshot.schedule }
}
