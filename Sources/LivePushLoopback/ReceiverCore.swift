import LivePushWire
import NIOCore

/// State shared between the receiver's API and its connections: event subscribers, ended
/// publishes, waiters and open channels. Thread-safe.
final class ReceiverCore: Sendable {
    struct Waiter {
        var stream: String
        var continuation: CheckedContinuation<PublishSummary, any Error>
        var timeoutTask: Task<Void, Never>?
    }

    struct State {
        var nextID = 1
        var nextPublishID = 1
        var summaries = SummaryLog()
        var activePublishes: [String: Int] = [:]
        /// The newest publish id per stream name.
        var newestPublish: [String: Int] = [:]
        var waiters: [Int: Waiter] = [:]
        /// Stream names still held by a publisher whose connection died silently, until when
        /// (nil: until the receiver stops).
        var heldStreams: [String: NIODeadline?] = [:]
        var channels: [ObjectIdentifier: Connection] = [:]
        var nextConnection = 0
        var limitCounters = ReceiverLimitCounters()
        var stopped = false
    }

    struct Connection {
        var channel: any Channel
        /// Accept order: at the cap, the oldest connection still in its handshake makes room.
        var number: Int
        var handshakeDone = false
    }

    private let state = Locked(State())
    private let events = EventSubscribers<ReceiverEvent>()
    /// Sees every event (the ``FaultLoopback`` republishes them).
    private let observer: (@Sendable (ReceiverEvent) -> Void)?

    init(observer: (@Sendable (ReceiverEvent) -> Void)? = nil) {
        self.observer = observer
    }

    // MARK: Events

    func makeEventStream() -> AsyncStream<ReceiverEvent> { events.makeStream() }

    func emit(_ event: ReceiverEvent) {
        observer?(event)
        events.emit(event)
    }

    // MARK: Publishes

    func publishStarted(app: String, stream: String) -> Int {
        let id = state.withLock { s in
            s.activePublishes[stream, default: 0] += 1
            s.newestPublish[stream] = s.nextPublishID
            defer { s.nextPublishID += 1 }
            return s.nextPublishID
        }
        emit(.publishStarted(app: app, stream: stream))
        return id
    }

    /// Keeps `stream` held (see ``isHeld(_:)``) for `duration` (nil: until stop).
    func holdStream(_ stream: String, for duration: Duration?) {
        let until = duration.map { NIODeadline.now() + .nanoseconds($0.totalNanoseconds) }
        state.withLock { $0.heldStreams[stream] = .some(until) }
    }

    /// Whether a silently dead publisher still holds `stream`.
    func isHeld(_ stream: String) -> Bool {
        state.withLock { s in
            guard let entry = s.heldStreams[stream] else { return false }
            if let until = entry, until <= .now() {
                s.heldStreams[stream] = nil
                return false
            }
            return true
        }
    }

    /// Whether `id` is the newest publish of `stream` (an older one may end after a newer began).
    func isNewestPublish(_ id: Int, of stream: String) -> Bool {
        state.withLock { $0.newestPublish[stream] == id }
    }

    func publishEnded(_ summary: PublishSummary) {
        let resumed: [Waiter] = state.withLock { s in
            // Kept for ``summaries()`` and waiters, within SummaryLog's bounds (10,000, 8 MiB).
            s.summaries.append(summary)
            if let n = s.activePublishes[summary.stream] {
                s.activePublishes[summary.stream] = n > 1 ? n - 1 : nil
            }
            // The newest publish matters only while one of that name is open (its recorder asks
            // when it ends); forgetting it then keeps the table as small as what is on air.
            if s.activePublishes[summary.stream] == nil { s.newestPublish[summary.stream] = nil }
            let ids = s.waiters.filter { $0.value.stream == summary.stream }.map(\.key)
            return ids.compactMap { s.waiters.removeValue(forKey: $0) }
        }
        emit(.publishEnded(summary))
        for w in resumed {
            w.timeoutTask?.cancel()
            w.continuation.resume(returning: summary)
        }
    }

    func summaries() -> [PublishSummary] {
        state.withLock { $0.summaries.summaries }
    }

    func makeWaiterID() -> Int {
        state.withLock { s in
            defer { s.nextID += 1 }
            return s.nextID
        }
    }

    /// Registers a waiter, or resolves it at once: with the latest summary of `stream` when no
    /// publish of it is active, with `.stopped` after stop.
    func addWaiter(id: Int, stream: String, timeout: Duration, continuation: CheckedContinuation<PublishSummary, any Error>) {
        enum Outcome { case wait, summary(PublishSummary), fail(any Error) }
        let outcome: Outcome = state.withLock { s in
            if Task.isCancelled { return .fail(CancellationError()) }
            // Done when the newest publish of the stream has ended: an older one that a client
            // left for dead (a stalled connection) may never end.
            if let last = s.summaries.summaries.last(where: { $0.stream == stream }),
               s.activePublishes[stream] == nil || s.newestPublish[stream] == last.publishID {
                return .summary(last)
            }
            if s.stopped { return .fail(ReceiverError.stopped) }
            s.waiters[id] = Waiter(stream: stream, continuation: continuation, timeoutTask: nil)
            return .wait
        }
        switch outcome {
        case .summary(let summary): continuation.resume(returning: summary)
        case .fail(let error): continuation.resume(throwing: error)
        case .wait:
            let task = Task { [weak self] in
                try? await Task.sleep(for: timeout)
                if Task.isCancelled { return }
                self?.failWaiter(id: id, error: ReceiverError.timeout(stream: stream))
            }
            let stillWaiting = state.withLock { s in
                if s.waiters[id] != nil { s.waiters[id]?.timeoutTask = task; return true }
                return false
            }
            if !stillWaiting { task.cancel() }
        }
    }

    func failWaiter(id: Int, error: any Error) {
        guard let waiter = state.withLock({ $0.waiters.removeValue(forKey: id) }) else { return }
        waiter.timeoutTask?.cancel()
        waiter.continuation.resume(throwing: error)
    }

    /// Waits for the end of a publish of `stream` (see ``RTMPReceiver/waitForPublishEnd(stream:timeout:)``).
    func waitForPublishEnd(stream: String, timeout: Duration) async throws -> PublishSummary {
        let id = makeWaiterID()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                addWaiter(id: id, stream: stream, timeout: timeout, continuation: continuation)
            }
        } onCancel: {
            failWaiter(id: id, error: CancellationError())
        }
    }

    // MARK: Channels and lifecycle

    /// Returns false (and the caller closes the channel) once stopped, or when `limit`
    /// connections are open and none of them is still in its handshake. At the limit, the
    /// oldest connection in its handshake is closed to make room.
    func register(_ channel: any Channel, limit: Int = .max) -> Bool {
        enum Outcome { case accepted, evicting(any Channel), refused, stopped }
        let outcome: Outcome = state.withLock { s in
            if s.stopped { return .stopped }
            var outcome = Outcome.accepted
            if s.channels.count >= limit {
                guard let oldest = s.channels.values.filter({ !$0.handshakeDone }).min(by: { $0.number < $1.number }) else {
                    return .refused
                }
                s.channels[ObjectIdentifier(oldest.channel)] = nil
                outcome = .evicting(oldest.channel)
            }
            s.nextConnection += 1
            s.channels[ObjectIdentifier(channel)] = Connection(channel: channel, number: s.nextConnection)
            return outcome
        }
        switch outcome {
        case .stopped:
            return false
        case .refused:
            noteLimit(.connectionRefused, remote: Self.remote(of: channel))
            return false
        case .evicting(let oldest):
            noteLimit(.connectionEvicted, remote: Self.remote(of: oldest))
            oldest.close(promise: nil)
        case .accepted:
            break
        }
        channel.closeFuture.whenComplete { [weak self] _ in
            self?.state.withLock { _ = $0.channels.removeValue(forKey: ObjectIdentifier(channel)) }
        }
        return true
    }

    /// The connection finished its handshake: it no longer makes room for new ones.
    func handshakeCompleted(_ channel: any Channel) {
        state.withLock { $0.channels[ObjectIdentifier(channel)]?.handshakeDone = true }
    }

    /// Counts a limit a peer reached and reports it.
    func noteLimit(_ limit: ReceiverLimit, remote: String) {
        state.withLock { $0.limitCounters.note(limit) }
        emit(.limitReached(limit, remote: remote))
    }

    func limitCounters() -> ReceiverLimitCounters {
        state.withLock { $0.limitCounters }
    }

    /// Connections open now.
    var connectionCount: Int { state.withLock { $0.channels.count } }

    static func remote(of channel: any Channel) -> String {
        guard let address = channel.remoteAddress else { return "?" }
        return "\(address.ipAddress ?? "?"):\(address.port ?? 0)"
    }

    /// Marks the core stopped and returns the open channels.
    func beginStop() -> [any Channel] {
        state.withLock { s in
            s.stopped = true
            return s.channels.values.map(\.channel)
        }
    }

    /// Fails remaining waiters and ends all event streams.
    func finishStop() {
        let waiters = state.withLock { s in
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for w in waiters {
            w.timeoutTask?.cancel()
            w.continuation.resume(throwing: ReceiverError.stopped)
        }
        events.finish()
    }
}
