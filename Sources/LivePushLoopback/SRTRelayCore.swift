import NIOCore

/// State an ``SRTRelay`` shares with its event loop: the rules, session numbering, the start
/// time and event subscribers. Thread-safe.
final class SRTRelayCore: Sendable {
    private struct State {
        var rules: [SRTFaultRule]
        var sessionCount = 0
        var started: NIODeadline = .now()
        var stopped = false
    }

    private let state: Locked<State>
    private let events = EventSubscribers<SRTRelayEvent>()

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

    func makeEventStream() -> AsyncStream<SRTRelayEvent> { events.makeStream() }

    func emit(_ event: SRTRelayEvent) { events.emit(event) }

    /// Marks the relay stopped: no new sessions.
    func beginStop() { state.withLock { $0.stopped = true } }

    func finishEvents() { events.finish() }
}
