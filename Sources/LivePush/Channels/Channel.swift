import FoundationEssentials
import Dispatch
import Logging
import Synchronization

/// One channel of a ``ChannelManager``: its spec, the push that runs it, and what it reports.
/// Safe from any thread. Its push's events are logged (swift-log, with the channel, output,
/// event and code as metadata) and counted.
public final class Channel: Sendable {
    /// What a channel is doing (the `state` label of `livepush_channel_state`).
    public enum Status: String, Sendable, CaseIterable {
        /// Not running (never started, or stopped).
        case stopped
        /// Starting its push.
        case starting
        /// Publishing to its outputs.
        case pushing
        /// An output lost its connection and is being restored.
        case reconnecting
        /// Its push failed (see ``Snapshot/lastError``).
        case failed
        /// Its media ended.
        case finished
    }

    /// What the API and the metrics show of a channel.
    public struct Snapshot: Sendable {
        /// The channel's id.
        public var id: String
        /// Where the channel is in its life.
        public var status: Status
        /// What the channel plays and where it goes.
        public var spec: ChannelSpec
        /// The figures of its current push.
        public var stats: PushStats
        /// The channel's outputs, in the order of `spec.outputs`.
        public var outputs: [Output]
        /// The error that last failed the channel, if any.
        public var lastError: LivePushError?
        /// Times the channel was started.
        public var starts: Int
        /// While the channel waits to try again (``Status/reconnecting``): how long until its next
        /// attempt, a reconnect of an output or a restart after its input failed.
        public var nextAttemptIn: Duration?
    }

    /// One output of a channel.
    public struct Output: Sendable {
        /// Its URL, redacted (the stream key too).
        public var url: String
        /// Its id in the running push (``PushStats/outputs``), nil when stopped.
        public var pushID: Int?
        /// True while the output is connected.
        public var connected: Bool
        /// Reconnects it began in the running push.
        public var reconnects: Int
    }

    /// Where the channel itself stands. While its push runs, what it is doing is the push's
    /// own state and its outputs' own figures, read when asked (``status(_:push:retryPending:)``):
    /// the channel keeps no copy of them.
    enum Phase: Sendable, Equatable {
        /// Not running (never started, or stopped).
        case stopped
        /// Its push opens (on an opening worker).
        case opening
        /// Its push runs (or ended with its media).
        case running
        /// Its push could not start.
        case failed
        /// Its push failed; a restart waits (``Snapshot/nextAttemptIn``).
        case restartPending
    }

    private struct Running {
        var spec: ChannelSpec
        var pusher: LivePusher?
        var playout: PlayoutControl?
        var phase = Phase.stopped
        var lastError: LivePushError?
        var starts = 0
        /// Bumped per start: events of an earlier run are not counted against the new one.
        var generation = 0
        /// The running push's output id of each output in `spec.outputs` (they differ once one is removed).
        var pushOutputIDs: [Int] = []
        /// When the next attempt is due while the channel (a restart) or its push (a connect)
        /// waits for one; cleared once the push publishes.
        var nextAttemptAt: MediaTime?
        /// Restarts after a failure since the channel last published: they set the backoff.
        var failedRestarts = 0
        /// The restart waiting after a failure.
        var restart: ConnectionWorkers.Ticket?
        /// Reads the running push's events; it ends after the push's final `stopped`.
        var observer: Task<Void, Never>?

        /// What the channel is doing now: its own phase, else its push's state.
        var status: Status { Channel.status(phase, push: pusher?.state, retryPending: nextAttemptAt != nil) }

        var isLive: Bool { pusher != nil && [.pushing, .starting, .reconnecting].contains(status) }
    }

    /// A channel's status from its phase and, while it runs, its push's state (pure).
    static func status(_ phase: Phase, push: PushState?, retryPending: Bool) -> Status {
        switch phase {
        case .stopped: .stopped
        case .opening: .starting
        case .failed: .failed
        case .restartPending: .reconnecting
        case .running:
            switch push {
            // Waiting to try again is not failing: the API and the metrics say so.
            case nil, .idle?, .connecting?: retryPending ? .reconnecting : .starting
            case .pushing?, .paused?, .stopping?: .pushing
            case .reconnecting?: .reconnecting
            case .stopped?: .finished
            // Its restart is being scheduled (``observe(_:generation:)``).
            case .failed?: .reconnecting
            }
        }
    }

    /// The channel's id (``ChannelSpec/id``).
    public let id: String
    private let running: Mutex<Running>
    /// Held through a whole start, stop or restart, so that concurrent calls take turns: two
    /// starts could both see no pusher (it is set once started) and leave one orphaned.
    private let lifecycle = Mutex(())
    private let logger: Logger
    /// Where the wait before the next attempt is measured (``Snapshot/nextAttemptIn``).
    private let clock: any MonotonicClock
    /// Its programme guide and as-run log (files as its spec had them when it was made).
    package let exports: ScheduleExports

    init(spec: ChannelSpec, logger: Logger, clock: any MonotonicClock = SystemMonotonicClock()) {
        self.clock = clock
        id = spec.id
        running = Mutex(Running(spec: spec))
        var logger = logger
        logger[metadataKey: "channel"] = .string(spec.id)
        self.logger = logger
        exports = ScheduleExports.channel(spec) { error in
            logger.error("as-run log not written", metadata: ["code": .stringConvertible(error.code.rawValue), "error": .string(error.message)])
        }
    }

    /// What the channel plays and where it goes, as last applied.
    public var spec: ChannelSpec { running.withLock { $0.spec } }

    /// The channel's status, figures and last error, now.
    public var snapshot: Snapshot {
        let (state, pusher) = running.withLock { ($0, $0.pusher) }
        let status = state.status
        let figures = pusher?.outputFigures() ?? []
        let outputs = state.spec.outputs.enumerated().map { index, url in
            let pushID = pusher != nil && index < state.pushOutputIDs.count ? state.pushOutputIDs[index] : nil
            let own = pushID.flatMap { figures.indices.contains($0) ? figures[$0] : nil }
            return Output(url: Redaction.redactStreamKey(url), pushID: pushID, connected: own?.isConnected ?? false,
                          reconnects: own?.reconnects ?? 0)
        }
        let nextAttemptIn = status == .reconnecting ? state.nextAttemptAt.map { max(.zero, $0 - clock.now()).duration } : nil
        return Snapshot(id: id, status: status, spec: state.spec, stats: pusher?.stats() ?? PushStats(), outputs: outputs,
                        lastError: state.lastError, starts: state.starts, nextAttemptIn: nextAttemptIn)
    }

    /// The running playout channel's controls (nil for a file channel, or when stopped).
    public var playout: PlayoutControl? { running.withLock { $0.playout } }
    /// The running push (nil when stopped), for the extensions that act on it.
    var runningPusher: LivePusher? { running.withLock { $0.pusher } }

    /// Starts the channel's push and returns at once: the channel is `starting` until its open
    /// (on one of the opening workers the process shares) says `pushing` or `failed`, with its error.
    /// Throws `invalidState` when it is already starting or running.
    public func start() throws(LivePushError) {
        try lifecycle.withLock { _ throws(LivePushError) in try startInTurn() }
    }

    /// Called with the lifecycle lock held; blocks on nothing (the open runs elsewhere).
    /// `afterFailure`: a restart after the push failed, whose failed open waits and tries again.
    private func startInTurn(afterFailure: Bool = false) throws(LivePushError) {
        let spec = running.withLock { $0.spec }
        let generation = try running.withLock { state throws(LivePushError) -> Int in
            if state.pusher != nil || state.phase == .opening, ![.failed, .finished, .stopped].contains(state.status) {
                throw LivePushError(.invalidState, "channel \(spec.id) is already running")
            }
            state.generation += 1
            if let restart = state.restart { ConnectionWorkers.shared.cancel(restart) }
            state.restart = nil
            state.nextAttemptAt = nil
            state.phase = .opening
            state.lastError = nil
            state.pushOutputIDs = Array(spec.outputs.indices)
            state.starts += 1
            return state.generation
        }
        let pusher = LivePusher(config: ChannelOpener.config(for: spec))
        let events = pusher.events()
        let observer = Task.detached { [weak self] in
            for await event in events { self?.observe(event, generation: generation) }
        }
        running.withLock { $0.observer = observer }
        logger.info("channel starting", metadata: ["event": "channelStarting"])
        ChannelOpener.open(pusher, spec: spec) { [weak self] result in
            guard let self else {
                if case .success(let opened) = result { opened.discard() }
                return
            }
            self.opened(result, generation: generation, afterFailure: afterFailure)
        }
    }

    /// The outcome of an open, on its thread. An open that a stop, restart or removal overtook
    /// is stopped at once: the channel has moved on.
    private func opened(_ result: Result<ChannelOpener.Opened, LivePushError>, generation: Int, afterFailure: Bool) {
        let current = running.withLock { state -> Bool in
            guard state.generation == generation else { return false }
            switch result {
            case .success(let opened):
                state.pusher = opened.pusher
                state.playout = opened.playout
                state.phase = .running
            case .failure(let error) where afterFailure:
                state.lastError = error
                scheduleRestart(&state, after: error)
            case .failure(let error):
                state.phase = .failed
                state.lastError = error
            }
            return true
        }
        switch result {
        case .success(let opened) where !current:
            opened.discard()
        case .success:
            logger.info("channel started", metadata: ["event": "channelStarted"])
        case .failure(let error) where current && !afterFailure:
            logger.error("channel failed to start", metadata: ["event": "channelFailed", "code": .stringConvertible(error.code.rawValue),
                                                               "error": .string(error.message)])
        case .failure:
            break
        }
    }

    /// Stops the channel's push; it keeps its spec and can be started again.
    public func stop() {
        lifecycle.withLock { _ in _ = stopInTurn() }
    }

    /// Stops the channel's push and returns once it has ended: the server was told, and the
    /// recording has its duration (a process that exits sooner leaves neither).
    public func stopAndWait() async {
        let (pusher, observer) = lifecycle.withLock { _ in
            let pusher = stopInTurn()
            return (pusher, running.withLock { $0.observer })
        }
        // The push reports its end (and ends its events) only while something holds it.
        await observer?.value
        withExtendedLifetime(pusher) {}
    }

    /// Returns the push it stopped, to keep it alive until it has ended: its events stop with it.
    @discardableResult
    private func stopInTurn() -> LivePusher? {
        let pusher = running.withLock { state -> LivePusher? in
            defer {
                state.pusher = nil
                state.playout = nil
                state.phase = .stopped
                state.generation += 1  // a restart waiting after a failure is off
                if let restart = state.restart { ConnectionWorkers.shared.cancel(restart) }
                state.restart = nil
                state.failedRestarts = 0
            }
            return state.pusher
        }
        try? pusher?.stop()
        if pusher != nil { logger.info("channel stopped", metadata: ["event": "channelStopped"]) }
        return pusher
    }

    /// Stops the channel and starts it again.
    public func restart() throws(LivePushError) {
        try lifecycle.withLock { _ throws(LivePushError) in
            stopInTurn()
            try startInTurn()
        }
    }

    /// Adds an output. A running channel is restarted with it (its other outputs reconnect at
    /// once and go on from a keyframe).
    public func addOutput(_ url: String) throws(LivePushError) {
        try PushURL.checkChannelOutput(url)
        let wasRunning = running.withLock { state -> Bool in
            state.spec.outputs.append(url)
            return state.isLive
        }
        logger.info("output added", metadata: ["event": "outputAdded", "url": .string(Redaction.redactStreamKey(url))])
        if wasRunning { try restart() }
    }

    /// Removes the output at `index` of the channel's list. On a running channel only that
    /// output stops (it unpublishes); the others go on untouched. Throws `channelNotFound`.
    public func removeOutput(at index: Int) throws(LivePushError) {
        let (pusher, pushID) = try running.withLock { state throws(LivePushError) -> (LivePusher?, Int?) in
            guard state.spec.outputs.indices.contains(index) else {
                throw LivePushError(.channelNotFound, "channel \"\(state.spec.id)\" has no output \(index)")
            }
            state.spec.outputs.remove(at: index)
            // Renditions follow their outputs' positions.
            state.spec.outputVideoLadders = Dictionary(uniqueKeysWithValues: state.spec.outputVideoLadders.compactMap { key, video in
                key == index ? nil : (key > index ? key - 1 : key, video)
            })
            let pushID = index < state.pushOutputIDs.count ? state.pushOutputIDs.remove(at: index) : nil
            return (state.isLive ? state.pusher : nil, pushID)
        }
        logger.info("output removed", metadata: ["event": "outputRemoved", "output": .stringConvertible(index)])
        if let pusher, let pushID { try pusher.stopOutput(pushID) }
    }

    /// Folds one event of the push into the channel's status and counters, and logs it.
    private func observe(_ event: PushEvent, generation: Int) {
        let current = running.withLock { state -> Bool in
            guard state.generation == generation else { return false }
            // What the push is doing is read from it when asked; here only what it says once:
            // that it failed (the channel restarts it), and when its next attempt is due.
            switch event {
            case .stateChanged(.pushing), .stateChanged(.paused):
                state.nextAttemptAt = nil
                state.failedRestarts = 0
            case .stateChanged(.failed(let error)):
                state.lastError = error
                scheduleRestart(&state, after: error)
            case .retryScheduled(_, let delay, let cause), .output(_, _, .retryScheduled(_, let delay, let cause)):
                state.lastError = cause
                state.nextAttemptAt = clock.now() + MediaTime(delay)
            default:
                break
            }
            return true
        }
        guard current else { return }
        if case .playout(let change) = event, let error = exports.handle(change, control: playout) {
            logger.warning("schedule export failed", metadata: ["code": .stringConvertible(error.code.rawValue), "error": .string(error.message)])
        }
        log(event)
    }

    /// A channel whose push failed (its input, or an output that cannot be retried) starts again
    /// after a wait that doubles from 1 s up to 30 s, like its outputs' reconnects. Called with
    /// the state locked.
    private func scheduleRestart(_ state: inout Running, after error: LivePushError) {
        let delay = Duration.seconds(min(30, 1 << min(state.failedRestarts, 5)))
        state.failedRestarts += 1
        state.phase = .restartPending
        state.nextAttemptAt = clock.now() + MediaTime(delay)
        let generation = state.generation
        state.restart = ConnectionWorkers.shared.run(after: delay) { [weak self] in self?.restartAfterFailure(generation) }
        logger.warning("channel failed; restarting", metadata: ["event": "channelRestartScheduled", "code": .stringConvertible(error.code.rawValue),
                                                                "error": .string(error.message), "retryIn": .stringConvertible(delay.components.seconds)])
    }

    private func restartAfterFailure(_ generation: Int) {
        lifecycle.withLock { _ in
            let current = running.withLock { state -> (failed: LivePusher?, Bool) in
                guard state.generation == generation, state.phase == .restartPending else { return (nil, false) }
                state.restart = nil
                defer {
                    state.pusher = nil
                    state.playout = nil
                }
                return (state.pusher, true)
            }
            guard current.1 else { return }
            try? current.failed?.stop()
            do throws(LivePushError) {
                try startInTurn(afterFailure: true)
            } catch {
                running.withLock { scheduleRestart(&$0, after: error) }
            }
        }
    }

    private func log(_ event: PushEvent) {
        if case .stats = event { return }
        if case .output(let id, let url, let inner) = event {
            var metadata: Logger.Metadata = ["output": .stringConvertible(id), "url": .string(Redaction.redactStreamKey(url))]
            metadata["event"] = .string(inner.name)
            if let error = inner.error { metadata["code"] = .stringConvertible(error.code.rawValue); metadata["error"] = .string(error.message) }
            logger.log(level: inner.error == nil ? .info : .warning, "\(inner.name)", metadata: metadata)
            return
        }
        var metadata: Logger.Metadata = ["event": .string(event.name)]
        if let error = event.error { metadata["code"] = .stringConvertible(error.code.rawValue); metadata["error"] = .string(error.message) }
        if case .pushStarted(let url) = event { metadata["url"] = .string(Redaction.redactStreamKey(url)) }
        logger.log(level: event.error == nil ? .info : .warning, "\(event.name)", metadata: metadata)
    }
}
