/// The subscribers of an event stream (`makeEventStream()` of the loopback, the receiver and
/// the SRT relay): each gets every event from the time it subscribed, up to 10,000 of them
/// buffered, until ``finish()``. Thread-safe.
final class EventSubscribers<Event: Sendable>: Sendable {
    private struct State {
        var continuations: [Int: AsyncStream<Event>.Continuation] = [:]
        var nextID = 1
        var finished = false
    }

    private let state = Locked(State())

    /// A new subscriber's stream; one made after ``finish()`` ends at once.
    func makeStream() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(10_000))
        let id: Int? = state.withLock { s in
            if s.finished { return nil }
            defer { s.nextID += 1 }
            s.continuations[s.nextID] = continuation
            return s.nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    func emit(_ event: Event) {
        let continuations = state.withLock { Array($0.continuations.values) }
        for continuation in continuations { continuation.yield(event) }
    }

    /// Ends every stream; later subscribers get an ended one.
    func finish() {
        let continuations = state.withLock { s in
            s.finished = true
            defer { s.continuations = [:] }
            return Array(s.continuations.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}
