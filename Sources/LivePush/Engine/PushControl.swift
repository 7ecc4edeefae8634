/// A push's one control state, and the one place where every ``EngineMessage`` is decided:
/// the push's ``PushState`` (from the app's start, pause, resume, stop and reconnect, the
/// outputs' signals, the source's failure), the events the app hears, what the outputs are
/// ordered, which commands the producer takes and when it stops. Pure, so each message's
/// effect is unit-tested without sockets (`PushControlTests`, `PushControlLifecycleTests`). Its driver,
/// ``PushEngine/receive(_:)``, applies messages one at a time under the engine's lock, in the
/// order they arrive, emits the returned events while it still holds that lock (so every
/// observer sees them in the order the state changed, whichever threads raced: the app's, an
/// output's, the producer's), and then does the rest of what the ``Actions`` say.
/// ``LivePusher`` keeps only what lies between pushes (idle, or how the last one ended) and
/// asks the running push for its state.
///
/// A push ends in two steps: a message decides the end (every output finished, every first
/// connect failed, the source failed), and the state stays as it is while the driver closes
/// the recording and the pusher takes the final figures; the pusher's ``EngineMessage/close(finalStats:)``
/// then moves the state to `stopped` or `failed` and emits `stopped` with those figures, under
/// the engine's lock taken inside the pusher's (the one that says which push runs), so the
/// final state, `stopped` and the end of the app's streams all come before a new start. Once
/// the end is decided, the outputs' signals are no longer reported (`stopped` is the push's
/// last event) and a second end is ignored.
///
/// The transitions of ``PushState`` stay a value of their own, ``PushStateMachine``, which
/// only this type holds: it is the state diagram the public documentation draws, tested
/// move by move on its own (`PushStateMachineTests`, every legal and illegal move and the
/// refusal messages), while this type decides what else each move means (events, orders,
/// commands); folded into here they would make one long switch of two concerns.
///
/// Why a lock-serialized inbox on the caller's thread rather than an actor or an event loop of
/// its own: the callers are threads (the app's, the outputs' connect workers and send loops),
/// and from a thread an actor or an event loop costs a task or a wake-up of another thread per
/// message. Measured (`Benchmarks/inbox-benchmark.swift`, release, this 2-core machine): 5-10 ns
/// per message through a `Mutex`, 130-180 ns through an actor awaited from a task, 1.2-1.9 µs
/// through an actor from a thread (a task per message). An event loop per push would be a
/// thread per push at 1000 channels, or a shared loop that one slow push holds up. The producer
/// takes its commands between two packets; the outputs take their orders on their own threads.
struct PushControl: Sendable {
    /// What an output is told to do.
    enum OutputOrder: Sendable, Equatable {
        case stop, reconnect
        case updateURL(PushURL)
        case updateWHIPToken(String)
    }

    /// What the driver does for one message, in this order: emit the events and queue the
    /// producer's commands (both under the lock that decided them, so `networkPoor` is heard
    /// before the bitrate change it causes, and commands keep the order of their decisions),
    /// then order the outputs and, when the push is over, hand it back to its pusher.
    struct Actions: Sendable {
        /// What the app hears, in order: state changes (`stateChanged`) and the events they
        /// come with, the push's and, with several outputs, each output's (tagged).
        var events: [PushEvent] = []
        var outputs: [(id: Int, order: OutputOrder)] = []
        var producer: [EngineCommand] = []
        /// The producer stops (the push is over, or it can no longer be sent anywhere).
        var stopsProducer = false
        /// The push's end was decided: the driver closes the recording and hands the push back
        /// to its pusher, which takes the final figures and sends ``EngineMessage/close(finalStats:)``.
        var endsPush = false
        /// Emitted once the app's event streams have ended, so only delegates hear them:
        /// interactive mode's last connection status comes after `stopped`.
        var afterStreamsEnd: [PushEvent] = []
    }

    /// How the push ends, once decided; applied by ``EngineMessage/close(finalStats:)``.
    struct Ending: Sendable {
        var input: PushStateMachine.Input
        var afterStreamsEnd: [PushEvent] = []
    }

    private var lifecycle = PushStateMachine()
    /// What the outputs say, folded into what the push as a whole says.
    private(set) var outputStates: OutputSetStateMachine
    private(set) var stopRequested = false
    private var ending: Ending?
    private var isClosed = false
    /// Each output's URL as the app may see it (secrets redacted), for its tagged events.
    private var outputURLs: [String]
    private let whipOutputs: [Int]
    /// Outputs with an encode of their own, whose network moves that encode's bitrate.
    private let hasRenditions: Bool
    /// A pause shows the slate (the pause image) rather than stopping the media.
    private let hasSlate: Bool

    init(urls: [PushURL], hasRenditions: Bool = false, hasSlate: Bool = false) {
        let kinds = urls.map(OutputKind.init)
        outputURLs = urls.map(\.redacted)
        whipOutputs = kinds.indices.filter { kinds[$0] == .whip }
        self.hasRenditions = hasRenditions
        self.hasSlate = hasSlate
        outputStates = OutputSetStateMachine(
            count: kinds.count,
            holdingTheStart: Set(kinds.indices.filter { OutputNeeds(kind: kinds[$0]).holdsTheStart }))
    }

    /// Where the push is.
    var state: PushState { lifecycle.state }
    var outputCount: Int { outputURLs.count }
    /// Interactive mode (a WHIP output): the push reports its connection status.
    var isInteractive: Bool { !whipOutputs.isEmpty }

    /// Decides one message. Throws `invalidState` (and changes nothing) for an app's call the
    /// push's state does not allow; nothing else is ever refused.
    mutating func apply(_ message: EngineMessage) throws(LivePushError) -> Actions {
        var actions = Actions()
        switch message {
        case .start:
            try move(.start, to: &actions)
        case .pause:
            try move(.pause, emitting: [.paused], to: &actions)
            if !stopRequested { actions.producer = [hasSlate ? .showSlate : .pause] }
        case .resume:
            try move(.resume, emitting: [.resumed], to: &actions)
            if !stopRequested { actions.producer = [hasSlate ? .leaveSlate : .resume] }
        case .stop:
            // A second stop while the first winds down is no error.
            if state == .stopping { return actions }
            try move(.stop, to: &actions)
            stopEverything(&actions)
        case .reconnect:
            guard state == .reconnecting || state == .pushing || state == .paused else {
                throw Self.refusal(of: message, while: state)
            }
            actions.outputs = (0..<outputCount).map { ($0, .reconnect) }
        case .command(let command):
            if !stopRequested { actions.producer = [command] }
        case .stopOutput(let id):
            actions.outputs = [(id, .stop)]
        case .updateURL(let url):
            guard outputCount > 0 else { break }
            outputURLs[0] = url.redacted
            actions.outputs = [(0, .updateURL(url))]
        case .updateWHIPToken(let token):
            actions.outputs = whipOutputs.map { ($0, .updateWHIPToken(token)) }
        case .output(let id, let signal):
            apply(signal, from: id, to: &actions)
        case .sourceFailed(let error):
            guard ending == nil else { break }  // it already ended another way
            actions.events = [Self.errorEvent(error)]
            stopEverything(&actions)
            end(.fail(error), &actions)
        case .close(let stats):
            close(with: stats, &actions)
        }
        return actions
    }

    /// Applies a move of the state and emits `stateChanged` and `events` after it.
    private mutating func move(_ input: PushStateMachine.Input, emitting events: [PushEvent] = [],
                       to actions: inout Actions) throws(LivePushError) {
        let next = try lifecycle.apply(input)
        actions.events.append(.stateChanged(next))
        actions.events.append(contentsOf: events)
    }

    /// The push ends (an app's stop, the source's failure): the producer stops and every
    /// output unpublishes.
    private mutating func stopEverything(_ actions: inout Actions) {
        stopRequested = true
        actions.stopsProducer = true
        actions.outputs = (0..<outputCount).map { ($0, .stop) }
    }

    /// Decides the end; the state moves when the pusher closes the push.
    private mutating func end(_ input: PushStateMachine.Input, _ actions: inout Actions) {
        ending = Ending(input: input)
        actions.endsPush = true
    }

    private mutating func close(with stats: PushStats, _ actions: inout Actions) {
        guard let ending, !isClosed else { return }
        isClosed = true
        // Every active state takes both ends; an illegal one would still end with `stopped`.
        if let next = try? lifecycle.apply(ending.input) { actions.events.append(.stateChanged(next)) }
        actions.events.append(.stopped(stats))
        actions.afterStreamsEnd = ending.afterStreamsEnd
    }

    /// Whether the push's end is decided (it may not be closed yet).
    var isEnding: Bool { ending != nil }

    /// The error an app's call gets from a push in `state`, or between pushes (idle, stopped,
    /// failed, when only a start is allowed): `cannot pause while idle`.
    static func refusal(of message: EngineMessage, while state: PushState) -> LivePushError {
        switch message {
        case .start: PushStateMachine.refusal(of: .start, while: state)
        case .pause: PushStateMachine.refusal(of: .pause, while: state)
        case .resume: PushStateMachine.refusal(of: .resume, while: state)
        case .stop: PushStateMachine.refusal(of: .stop, while: state)
        // Only the calls above and a reconnect are ever refused.
        default: LivePushError(.invalidState, "cannot reconnect while \(state)")
        }
    }

    /// How a failure is reported: the system's (memory, librtmp) or LivePush's.
    static func errorEvent(_ error: LivePushError) -> PushEvent {
        error.code == .outOfMemory || error.code == .rtmpStartFailed ? .systemError(error) : .sdkError(error)
    }

    // MARK: - The outputs' signals

    private mutating func apply(_ signal: PushOutput.Signal, from id: Int, to actions: inout Actions) {
        let decision = outputStates.apply(signal, from: id)
        // An output's own rendition adapts to its network; a WebRTC peer's lost pictures ask
        // its encode (else the input's) for a keyframe.
        if hasRenditions, case .network(let change) = signal { actions.producer.append(.outputNetwork(id: id, isPoor: change == .poor)) }
        if case .keyframeRequested = signal { actions.producer.append(.keyframeRequested(output: id)) }
        actions.outputs = decision.stop.map { ($0, .stop) }
        // Once the end is decided nothing more is reported: `stopped` is the push's last event.
        guard ending == nil else { return }
        if outputCount > 1, let event = Self.event(for: signal) {
            actions.events.append(.output(id: id, url: outputURLs[id], event))
        }
        for whole in decision.forward {
            // Every output failed its first connect: nothing will carry the media.
            if case .connectFailed = whole {
                stopRequested = true
                actions.stopsProducer = true
            }
            report(whole, &actions)
            // The push's network as a whole moves its encoder's adaptive bitrate.
            if case .network(let change) = whole { actions.producer.append(.networkChanged(isPoor: change == .poor)) }
        }
    }

    /// What the push as a whole reported, as state changes and events. A move the state does
    /// not allow reports nothing (a stop during connecting wins over the publish that follows).
    private mutating func report(_ signal: PushOutput.Signal, _ actions: inout Actions) {
        switch signal {
        case .published(let url):
            try? move(.published, emitting: [.pushStarted(url: url)], to: &actions)
        case .firstFrameSent:
            actions.events.append(.firstFramePushed)
        case .connectionLost(let error):
            let events: [PushEvent] = error.code == .sendDataTimeout ? [.sendDataTimeout, .connectionLost(error)] : [.connectionLost(error)]
            try? move(.lost, emitting: events, to: &actions)
        case .reconnectRequested:
            try? move(.lost, to: &actions)
        case .reconnected:
            try? move(.reconnected, emitting: [.reconnectSucceeded], to: &actions)
        case .reconnectFailed(let cause):
            actions.events += [.reconnectFailed(LivePushError(.reconnectFailed, cause.message)), .sdkError(cause)]
        case .connectFailed(let error):
            actions.events += [.connectFailed(error), Self.errorEvent(error)]
            end(.fail(error), &actions)
        case .finished:
            end(.finished, &actions)
        case .reconnecting, .staleSession, .retryScheduled, .network, .networkQuality, .keyframeRequested, .cueMoved,
             .serverCapabilities, .warning, .serverReconnectRequested, .serverReconnectFailed:
            if let event = Self.event(for: signal) { actions.events.append(event) }
        }
        guard isInteractive, let status = Self.connectionStatus(after: signal) else { return }
        // The status after an end follows `stopped`.
        if ending != nil {
            ending?.afterStreamsEnd.append(.connectionStatusChanged(status))
        } else {
            actions.events.append(.connectionStatusChanged(status))
        }
    }

    /// Interactive mode's connection status, from what the push as a whole did.
    private static func connectionStatus(after signal: PushOutput.Signal) -> ConnectionStatus? {
        switch signal {
        case .published, .reconnected: .connected
        case .reconnecting, .reconnectRequested: .connecting
        case .connectionLost, .finished: .disconnected
        case .connectFailed, .reconnectFailed: .failed
        default: nil
        }
    }

    /// The event an output's signal is reported as, tagged with the output (simulcast).
    private static func event(for signal: PushOutput.Signal) -> PushEvent? {
        switch signal {
        case .published(let url): .pushStarted(url: url)
        case .firstFrameSent: .firstFramePushed
        case .connectionLost(let error): .connectionLost(error)
        case .reconnectRequested, .finished: nil
        case .reconnecting(let attempt): .reconnectStarted(attempt: attempt)
        case .staleSession(let attempt, let waited, let retryIn): .staleSession(attempt: attempt, waited: waited, retryIn: retryIn)
        case .retryScheduled(let attempt, let delay, let cause): .retryScheduled(attempt: attempt, delay: delay, cause: cause)
        case .reconnected: .reconnectSucceeded
        case .reconnectFailed(let cause): .reconnectFailed(LivePushError(.reconnectFailed, cause.message))
        case .network(.poor): .networkPoor
        case .network(.recovered): .networkRecovered
        case .connectFailed(let error): .connectFailed(error)
        case .networkQuality(let quality): .networkQualityChanged(quality)
        case .keyframeRequested: nil
        case .cueMoved(let from, let to): .cueMoved(from: .microseconds(from), to: .microseconds(to))
        case .serverCapabilities(let capabilities): .serverCapabilities(capabilities)
        case .warning(let error): .warning(error)
        case .serverReconnectRequested(let url, let description): .reconnectRequested(url: url, description: description)
        case .serverReconnectFailed(let error): .reconnectRequestFailed(error)
        }
    }
}
