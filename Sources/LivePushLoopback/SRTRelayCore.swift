import NIOCore

/// State an ``SRTRelay`` shares with its event loop: the rules, session numbering, the start
/// time and event subscribers. Thread-safe.
final class SRTRelayCore: Sendable {
    private struct State {
        var rules: [SRTFaultRule]
        var sessionCount = 0
        var started: NIODeadline = .now()
        var subscribers: [Int: AsyncStream<SRTRelayEvent>.Continuation] = [:]
        var nextSubscriberID = 1
        var stopped = false
    }

    private let state: Locked<State>

    init(rules: [SRTFaultRule]) {
        state = Locked(State(rules: rules))
    }

    var rules: [SRTFaultRule] { state.withLock { $0.rules } }
    var sessionCount: Int { state.withLock { $0.sessionCount } }
    var startTime: NIODeadline { state.withLock { $0.started } }

    func markStarted() { state.withLock { $0.started = .now() } }

    /// The next session's number and the rules it starts with; nil once stopped.
    func nextSession() -> (number: Int, rules: [SRTFaultRule])? {
        state.withLock { s in
            if s.stopped { return nil }
            s.sessionCount += 1
            return (s.sessionCount, s.rules)
        }
    }

    func makeEventStream() -> AsyncStream<SRTRelayEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: SRTRelayEvent.self, bufferingPolicy: .bufferingNewest(10_000))
        let id: Int? = state.withLock { s in
            if s.stopped { return nil }
            defer { s.nextSubscriberID += 1 }
            s.subscribers[s.nextSubscriberID] = continuation
            return s.nextSubscriberID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    func emit(_ event: SRTRelayEvent) {
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for s in subscribers { s.yield(event) }
    }

    /// Marks the relay stopped: no new sessions.
    func beginStop() { state.withLock { $0.stopped = true } }

    func finishEvents() {
        let subscribers = state.withLock { s in
            defer { s.subscribers = [:] }
            return Array(s.subscribers.values)
        }
        for s in subscribers { s.finish() }
    }
}
