/// The connecting side of ``OutputState``: the episodes of connecting and reconnecting, and
/// what a new connection starts from. The blocking work (the attempts, the closes) is
/// ``PushOutput``'s, on connection workers; these events only say what it is to do.
extension OutputState {
    /// What a stop or a reconnect request does to a running episode.
    enum EpisodeStep: Equatable {
        /// The next attempt waits on this timer: run it now.
        case runNow(ConnectionWorkers.Ticket)
        /// The episode had given up: it starts again (`announcesReconnect`: as a reconnect the
        /// app asked for).
        case restart(announcesReconnect: Bool)
        /// An attempt is running; it looks at the request when it ends.
        case wait
    }

    mutating func beginFirstEpisode(_ machine: ReconnectStateMachine, _ resume: PushOutput.ResumeState) {
        episode = PushOutput.ConnectEpisode(machine: machine, resume: resume, isFirst: true)
    }

    /// The next attempt waits on `ticket` (unless one already does).
    mutating func attemptScheduled(_ ticket: ConnectionWorkers.Ticket) {
        if episode?.ticket == nil { episode?.ticket = ticket }
    }

    /// An attempt starts: false when a stop came first (then ``finishAfterStop()``).
    mutating func attemptStarts() -> Bool {
        episode?.ticket = nil
        reconnectRequested = false
        return !stopRequested
    }

    /// The stream the attempt announces: the configuration the episode followed.
    func attemptInfo(default info: StreamInfo) -> StreamInfo {
        episode?.resume.info ?? info
    }

    /// The attempt published: the episode ends, and the queue waits for its sender again.
    mutating func attemptPublished() -> PushOutput.ConnectEpisode? {
        connected = true
        queue.isDisconnected = false
        defer { episode = nil }
        return episode
    }

    /// The attempt failed: what the episode's ``ReconnectStateMachine`` decides, and whether it
    /// is the first connect (whose failure, unless `retriesFirstConnect`, ends the output).
    mutating func attemptFailed(_ error: LivePushError, retriesFirstConnect: Bool,
                                now: Int64) -> (decision: ReconnectStateMachine.Decision, isFirst: Bool)? {
        guard let isFirst = episode?.isFirst else { return nil }
        if isFirst && !retriesFirstConnect { return (.giveUp(error), true) }
        guard let decision = episode?.machine.attemptFailed(error, now: now) else { return nil }
        return (decision, isFirst)
    }

    /// The first connect gave up: the output is done.
    mutating func firstConnectGaveUp() {
        stopRequested = true
        episode = nil
    }

    /// A reconnect gave up: it waits for `reconnect()` or `stop()`. True when a stop came
    /// meanwhile and found no attempt waiting: the episode is to end now.
    mutating func reconnectGaveUp() -> Bool {
        episode?.gaveUp = true
        return stopRequested
    }

    /// A stop or a reconnect request while the output connects; nil when no episode runs (the
    /// output publishes, and its pump ends on the request).
    mutating func resumeEpisode(reconnect: Bool) -> EpisodeStep? {
        guard var current = episode else { return nil }
        if let ticket = current.ticket { return .runNow(ticket) }
        guard current.gaveUp else { return .wait }
        current.gaveUp = false
        if !stopRequested { _ = current.machine.begin(after: nil) }
        episode = current
        return .restart(announcesReconnect: reconnect && !stopRequested)
    }

    /// A published connection goes to `loop`; its stream header is stamped `headerTime`.
    mutating func attach(to loop: SendLoop, shift: Int64, lastSentDTS: Int64) -> Int64 {
        self.loop = loop
        lastLoopIndex = loop.index
        return queue.items.first.map { $0.dts + shift } ?? lastSentDTS
    }

    /// The pump ended: no loop serves the output until it publishes again.
    mutating func detach() {
        loop = nil
    }

    /// Reconnecting starts after a lost connection (`error`) or a requested reconnect (nil):
    /// the queue is made to start the next connection (`resume` says how) and a new episode
    /// decides the first wait.
    mutating func beginReconnecting(after error: LivePushError?, machine: ReconnectStateMachine,
                                    resume: PushOutput.ResumeState, frameStep: Int64) -> ReconnectStateMachine.Decision {
        var resume = resume
        reconnectRequested = false
        connected = false
        queue.isDisconnected = true
        prepareResume(&resume, frameStep: frameStep)
        var episode = PushOutput.ConnectEpisode(machine: machine, resume: resume, isFirst: false)
        let decision = episode.machine.begin(after: error)
        self.episode = episode
        return decision
    }

    /// Decides where the new connection starts: in `--fast` mode, what may not have reached the
    /// server goes back into the queue, re-stamped to follow the last timestamp sent by one
    /// frame (`frameStep`, µs); in real time, the queue's first keyframe.
    private mutating func prepareResume(_ resume: inout PushOutput.ResumeState, frameStep: Int64) {
        let resend = resume.history.takeForResend()
        if queue.mode == .backpressure, let first = resend.first,
           ResendHistory.canOpenAConnection(with: resend, hasVideo: resume.history.hasVideo) {
            queue.pushFront(resend)
            resume.shift = OutputClock.resendOffset(lastSent: resume.lastSentDTS, step: frameStep, first: first.dts)
        } else {
            queue.startAtKeyframe()
        }
    }

    /// A stop found no attempt to make: the output is done.
    mutating func finishAfterStop() {
        stopRequested = true
        episode = nil
        queue.isDisconnected = false
    }
}
