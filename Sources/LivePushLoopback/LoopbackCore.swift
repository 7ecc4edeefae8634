import NIOCore

/// State shared by a ``FaultLoopback`` and its connections: rules, connection numbering, open
/// channels, close reasons and event subscribers. Thread-safe.
final class LoopbackCore: Sendable {
    struct State {
        var rules: [FaultRule]
        var connectionCount = 0
        var channels: [ObjectIdentifier: any Channel] = [:]
        /// Client channels by connection number (they get ``FaultRulesChanged``).
        var clientChannels: [Int: any Channel] = [:]
        var closeReasons: [Int: String] = [:]
        var started: NIODeadline = .now()
        var stopped = false
    }

    private let state: Locked<State>
    private let events = EventSubscribers<LoopbackEvent>()

    init(rules: [FaultRule]) {
        state = Locked(State(rules: rules))
    }

    // MARK: Events

    func makeEventStream() -> AsyncStream<LoopbackEvent> { events.makeStream() }

    func emit(_ event: LoopbackEvent) { events.emit(event) }

    func finishEvents() { events.finish() }

    // MARK: Rules

    var rules: [FaultRule] { state.withLock { $0.rules } }

    /// Replaces the rules and returns the open client channels to notify.
    func setRules(_ rules: [FaultRule]) -> [any Channel] {
        state.withLock { s in
            s.rules = rules
            return Array(s.clientChannels.values)
        }
    }

    var startTime: NIODeadline {
        get { state.withLock { $0.started } }
    }

    func markStarted() { state.withLock { $0.started = .now() } }

    // MARK: Connections

    var connectionCount: Int { state.withLock { $0.connectionCount } }

    /// Numbers and registers a newly accepted client channel; nil once stopped.
    func accept(_ channel: any Channel) -> Int? {
        let number: Int? = state.withLock { s in
            if s.stopped { return nil }
            s.connectionCount += 1
            s.channels[ObjectIdentifier(channel)] = channel
            s.clientChannels[s.connectionCount] = channel
            return s.connectionCount
        }
        guard let number else { return nil }
        channel.closeFuture.whenComplete { [weak self] _ in
            self?.state.withLock { s in
                _ = s.channels.removeValue(forKey: ObjectIdentifier(channel))
                _ = s.clientChannels.removeValue(forKey: number)
            }
        }
        return number
    }

    /// Registers an upstream channel so that `stop()` closes it; false once stopped.
    func register(_ channel: any Channel) -> Bool {
        let ok = state.withLock { s in
            if s.stopped { return false }
            s.channels[ObjectIdentifier(channel)] = channel
            return true
        }
        if ok {
            channel.closeFuture.whenComplete { [weak self] _ in
                self?.state.withLock { _ = $0.channels.removeValue(forKey: ObjectIdentifier(channel)) }
            }
        }
        return ok
    }

    /// Records why a connection is closing; the first reason wins.
    func noteCloseReason(connection: Int, _ reason: String) {
        state.withLock { s in
            if s.closeReasons[connection] == nil { s.closeReasons[connection] = reason }
        }
    }

    /// Like ``noteCloseReason(connection:_:)`` for a channel that may be a client channel.
    func noteCloseReasonIfClient(_ channel: any Channel, _ reason: String) {
        state.withLock { s in
            if let number = s.clientChannels.first(where: { $0.value === channel })?.key, s.closeReasons[number] == nil {
                s.closeReasons[number] = reason
            }
        }
    }

    func takeCloseReason(connection: Int) -> String? {
        state.withLock { $0.closeReasons.removeValue(forKey: connection) }
    }

    /// Marks the core stopped and returns every open channel.
    func beginStop() -> [any Channel] {
        state.withLock { s in
            s.stopped = true
            return Array(s.channels.values)
        }
    }

    var isStopped: Bool { state.withLock { $0.stopped } }
}

/// Fired through a client pipeline after ``FaultLoopback/setFaults(_:)``.
struct FaultRulesChanged: Sendable {}
