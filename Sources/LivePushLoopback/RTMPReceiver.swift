import LivePushWire
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// An embedded RTMP server that accepts publishers (ffmpeg, librtmp) on a local port, answers
/// the NetConnection/NetStream commands, and records what it receives to FLV files.
///
/// Pipeline per connection: see `ReceiverPipeline`; every peer is bounded by
/// ``Configuration/limits``.
/// Runs on its own one-thread event loop group. `start()` and `stop()` block the calling thread
/// briefly; do not call them from the receiver's own event loop.
public final class RTMPReceiver: Sendable {
    /// The configuration it was created with.
    public let configuration: Configuration
    let core = ReceiverCore()

    private let listener = LocalListener()

    /// Creates a receiver; ``start()`` opens it.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Binds and starts accepting connections; returns the bound port.
    @discardableResult
    public func start() throws -> Int {
        let core = self.core
        let configuration = self.configuration
        let limit = Self.connectionLimit(configuration.limits.maxConnections)
        return try listener.start(host: configuration.host, port: configuration.port) { channel in
            guard core.register(channel, limit: limit) else {
                return channel.close()
            }
            return channel.eventLoop.makeCompletedFuture {
                try ReceiverPipeline.add(to: channel.pipeline.syncOperations, core: core, configuration: configuration)
            }
        }
    }

    /// `maxConnections`, kept below the process's descriptor limit (raised to its hard limit
    /// first): past that limit accept fails, for publishers as much as for idle sockets.
    static func connectionLimit(_ maxConnections: Int) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return maxConnections }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        // Room for the listener, recordings, the rest of the process.
        let descriptors = Int(clamping: limit.rlim_cur)  // RLIM_INFINITY is the largest value
        return max(1, min(maxConnections, descriptors - 128))
    }

    /// The bound port (0 before `start()`).
    public var port: Int { listener.port }

    /// Closes the listener and every connection (ending their publishes with reason "stop"),
    /// fails pending waiters, finishes event streams and shuts down the event loop group.
    /// Idempotent.
    public func stop() {
        listener.stop {
            for channel in core.beginStop() {
                // End publishes with reason "stop" before the close makes them "disconnect".
                try? channel.eventLoop.submit {
                    channel.pipeline.fireUserInboundEventTriggered(ReceiverStopEvent())
                }.wait()
                try? channel.close().wait()
            }
            core.finishStop()
        }
    }

    /// A new event stream; it sees events from now on and finishes when the receiver stops.
    public func makeEventStream() -> AsyncStream<ReceiverEvent> {
        core.makeEventStream()
    }

    /// Same as ``makeEventStream()``: every access returns a new subscription.
    public var events: AsyncStream<ReceiverEvent> {
        core.makeEventStream()
    }

    /// Returns the summary of `stream` once its publish has ended and its recording is closed.
    /// If the newest publish of `stream` has already ended (older ones may still be open: a
    /// connection the client gave up on), returns its summary at once; otherwise waits for the next end. Throws ``ReceiverError/timeout(stream:)`` after `timeout`,
    /// ``ReceiverError/stopped`` when the receiver stops, `CancellationError` when cancelled.
    public func waitForPublishEnd(stream: String, timeout: Duration) async throws -> PublishSummary {
        try await core.waitForPublishEnd(stream: stream, timeout: timeout)
    }

    /// How often each of ``Configuration/limits`` was reached since start.
    public func limitCounters() -> ReceiverLimitCounters {
        core.limitCounters()
    }

    /// Connections open now.
    public var connectionCount: Int { core.connectionCount }

    /// Summaries of the publishes that have ended (the last 10,000, within 8 MiB), oldest first.
    public func summaries() -> [PublishSummary] {
        core.summaries()
    }

    deinit {
        stop()
    }
}
