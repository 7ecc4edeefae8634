/// The push's control state, and the one place where every ``EngineMessage`` is decided: pure,
/// so each message's effect is unit-tested without sockets (`PushControlTests`). Its driver,
/// ``PushEngine/receive(_:)``, applies messages one at a time under the engine's lock, in the
/// order they arrive, and then does what the returned ``Actions`` say.
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

    /// What the pusher is told.
    enum Report: Sendable {
        /// The push as a whole, in an output's terms.
        case push(PushOutput.Signal)
        /// With several outputs: what output `id` reported (the driver adds its redacted URL).
        case output(id: Int, PushOutput.Signal)
    }

    /// What the driver does for one message, in this order: tell the pusher, order the
    /// outputs, then queue the producer's commands (so that `networkPoor` is heard before the
    /// bitrate change it causes).
    struct Actions: Sendable {
        /// Signals for the pusher (the push as a whole, and with several outputs each one's).
        var reports: [Report] = []
        var outputs: [(id: Int, order: OutputOrder)] = []
        var producer: [EngineCommand] = []
        /// The producer stops (the push is over, or it can no longer be sent anywhere).
        var stopsProducer = false
    }

    /// What the outputs say, folded into what the push as a whole says.
    private(set) var outputStates: OutputSetStateMachine
    private(set) var stopRequested = false
    private let outputCount: Int
    private let whipOutputs: [Int]
    /// Outputs with an encode of their own, whose network moves that encode's bitrate.
    private let hasRenditions: Bool

    init(outputKinds: [PushURL.Scheme], hasRenditions: Bool) {
        outputCount = outputKinds.count
        whipOutputs = outputKinds.indices.filter { outputKinds[$0].isWHIP }
        self.hasRenditions = hasRenditions
        outputStates = OutputSetStateMachine(
            count: outputKinds.count,
            holdingTheStart: Set(outputKinds.indices.filter { OutputNeeds(kind: outputKinds[$0]).holdsTheStart }))
    }

    mutating func apply(_ message: EngineMessage) -> Actions {
        var actions = Actions()
        switch message {
        case .command(let command):
            if !stopRequested { actions.producer = [command] }
        case .stop:
            stopRequested = true
            actions.stopsProducer = true
            actions.outputs = (0..<outputCount).map { ($0, .stop) }
        case .stopOutput(let id):
            actions.outputs = [(id, .stop)]
        case .reconnect:
            actions.outputs = (0..<outputCount).map { ($0, .reconnect) }
        case .updateURL(let url):
            if outputCount > 0 { actions.outputs = [(0, .updateURL(url))] }
        case .updateWHIPToken(let token):
            actions.outputs = whipOutputs.map { ($0, .updateWHIPToken(token)) }
        case .output(let id, let signal):
            apply(signal, from: id, to: &actions)
        }
        return actions
    }

    private mutating func apply(_ signal: PushOutput.Signal, from id: Int, to actions: inout Actions) {
        let decision = outputStates.apply(signal, from: id)
        // An output's own rendition adapts to its network; a WebRTC peer's lost pictures ask
        // its encode (else the input's) for a keyframe.
        if hasRenditions, case .network(let change) = signal { actions.producer.append(.outputNetwork(id: id, isPoor: change == .poor)) }
        if case .keyframeRequested = signal { actions.producer.append(.keyframeRequested(output: id)) }
        actions.outputs = decision.stop.map { ($0, .stop) }
        if outputCount > 1 { actions.reports.append(.output(id: id, signal)) }
        for event in decision.forward {
            // Every output failed its first connect: nothing will carry the media.
            if case .connectFailed = event {
                stopRequested = true
                actions.stopsProducer = true
            }
            actions.reports.append(.push(event))
            // The push's network as a whole moves its encoder's adaptive bitrate.
            if case .network(let change) = event { actions.producer.append(.networkChanged(isPoor: change == .poor)) }
        }
    }
}
