/// Folds what each output reports into what the push as a whole reports. Pure: the session
/// feeds it signals and forwards the decisions.
///
/// With one output the push *is* that output: every signal passes through unchanged. With
/// several (simulcast), each output's signals are also reported tagged with its id, and the
/// push as a whole is:
/// - started when the first output publishes, once every output that holds the start
///   (``OutputNeeds/holdsTheStart``: WHIP) has settled its first connect;
/// - lost when the last publishing output loses its connection, back when one publishes again;
/// - poor while any publishing output is congested (adaptive bitrate follows the slowest
///   healthy output), recovered when none is;
/// - failed only when every output failed its first connect;
/// - out of retries only when every output gave up;
/// - finished when every output has finished (an output that gave up is stopped once all
///   the others are done, so that the push can end).
struct OutputSetStateMachine: Sendable {
    enum OutputState: Sendable, Equatable { case connecting, publishing, reconnecting, gaveUp, failed, finished }

    struct Decision: Sendable {
        /// Signals of the push as a whole, in order (in an output's terms).
        var forward: [PushOutput.Signal] = []
        /// Outputs to stop (they gave up, and every other output is done).
        var stop: [Int] = []
    }

    private(set) var states: [OutputState]
    private var everPublished = false
    private var firstFrameSent = false
    private var congested: Set<Int> = []
    /// Outputs the producer waits for until their first connect has settled (published,
    /// failed, or a retry scheduled); removed as each one settles.
    private var holdingTheStart: Set<Int>

    init(count: Int, holdingTheStart: Set<Int> = []) {
        states = Array(repeating: .connecting, count: count)
        self.holdingTheStart = holdingTheStart
    }

    var isSingle: Bool { states.count == 1 }
    var anyPublishing: Bool { states.contains(.publishing) }
    /// Whether the producer may start: an output publishes, or none ever will.
    var canStartProducing: Bool {
        (anyPublishing && holdingTheStart.isEmpty) || states.allSatisfy { $0 == .failed || $0 == .finished }
    }

    mutating func apply(_ signal: PushOutput.Signal, from id: Int) -> Decision {
        var decision = Decision()
        switch signal {
        case .published, .connectFailed, .retryScheduled, .staleSession, .reconnecting, .finished: holdingTheStart.remove(id)
        default: break
        }
        switch signal {
        case .published(let url):
            let wasPublishing = anyPublishing
            states[id] = .publishing
            if !everPublished {
                everPublished = true
                decision.forward.append(.published(url: url))
            } else if !wasPublishing {
                decision.forward.append(.reconnected(url: url))
            }
        case .firstFrameSent:
            if !firstFrameSent {
                firstFrameSent = true
                decision.forward.append(.firstFrameSent)
            }
        case .connectionLost(let error):
            states[id] = .reconnecting
            if !anyPublishing {
                decision.forward.append(.connectionLost(error))
            } else if congested.remove(id) != nil, congested.isEmpty {
                // A dead output no longer holds the encoder's rate down for the others.
                decision.forward.append(.network(.recovered))
            }
            congested.remove(id)
        case .reconnectRequested:
            states[id] = .reconnecting
            if !anyPublishing { decision.forward.append(.reconnectRequested) }
        case .reconnecting(let attempt):
            states[id] = .reconnecting
            if isSingle { decision.forward.append(.reconnecting(attempt: attempt)) }
        case .retryScheduled:
            if isSingle { decision.forward.append(signal) }
        case .staleSession(let attempt, let waited, let retryIn):
            if isSingle { decision.forward.append(.staleSession(attempt: attempt, waited: waited, retryIn: retryIn)) }
        case .reconnected(let url):
            let wasPublishing = anyPublishing
            states[id] = .publishing
            if !wasPublishing { decision.forward.append(.reconnected(url: url)) }
        case .reconnectFailed(let error):
            states[id] = .gaveUp
            // Only when no output can carry the push any more (the app may call `reconnect()`).
            if states.allSatisfy({ $0 == .gaveUp || $0 == .failed }) { decision.forward.append(.reconnectFailed(error)) }
            decision.stop = givenUpOutputsToStop()
        case .network(let change):
            if isSingle {
                decision.forward.append(.network(change))
            } else if change == .poor {
                if congested.isEmpty { decision.forward.append(.network(.poor)) }
                congested.insert(id)
            } else if congested.remove(id) != nil, congested.isEmpty {
                decision.forward.append(.network(.recovered))
            }
        case .connectFailed(let error):
            states[id] = .failed
            if states.allSatisfy({ $0 == .failed }) {
                decision.forward.append(.connectFailed(error))
            } else if isOver {
                decision.forward.append(.finished)
            }
            decision.stop = givenUpOutputsToStop()
        case .networkQuality, .cueMoved, .serverCapabilities, .warning:
            decision.forward.append(signal)
        case .serverReconnectRequested, .serverReconnectFailed:
            // One output's own move: the push as a whole goes on as it was.
            if isSingle { decision.forward.append(signal) }
        case .keyframeRequested:
            break  // the session acts on it itself (a command to the producer); the pusher has nothing to say
        case .finished:
            states[id] = .finished
            if isOver { decision.forward.append(.finished) }
            decision.stop = givenUpOutputsToStop()
        }
        return decision
    }

    /// Every output has finished or failed, and at least one finished.
    private var isOver: Bool {
        states.contains(.finished) && states.allSatisfy { $0 == .finished || $0 == .failed }
    }

    /// With several outputs: once every output that has not given up is done, the ones that
    /// gave up are stopped (nobody will call `reconnect()` for them before the push ends).
    private func givenUpOutputsToStop() -> [Int] {
        guard !isSingle, states.contains(.gaveUp), states.contains(where: { $0 == .finished }),
              states.allSatisfy({ [.gaveUp, .failed, .finished].contains($0) }) else { return [] }
        return states.indices.filter { states[$0] == .gaveUp }
    }
}
