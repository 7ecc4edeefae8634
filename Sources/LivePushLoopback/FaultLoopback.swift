import LivePushWire
import NIOCore
import NIOPosix

/// A local RTMP endpoint that injects faults on cue, so that an app's handling of every
/// connection and publish error can be tested without a flaky network.
///
/// It either terminates RTMP itself (like ``RTMPReceiver``: answers the commands and records
/// what is published) or, with ``Configuration/upstream``, relays the bytes to a real RTMP
/// server. Faults are ``FaultRule``s (see ``FaultSpec`` for their text form): TCP-level faults
/// (refuse, reset, stall, throttle, latency, close during the handshake) apply in both modes;
/// RTMP-level faults (reject connect or publish, close after publish, malformed or truncated
/// replies) are answered by the loopback itself: in relay mode a connection that an RTMP-level
/// rule concerns is terminated locally and never reaches the upstream.
///
/// Pipelines: client → `FaultHandler` → (relay) `RelayGlueHandler` ⇄ upstream channel, or
/// (terminating) `HandshakeHandler` → `ChunkEncoderHandler` → `ChunkDecoderHandler` →
/// `RTMPSessionHandler`. One event loop thread. `start()` and `stop()` block briefly; do not
/// call them from the loopback's event loop.
public final class FaultLoopback: Sendable {
    /// The configuration it was created with.
    public let configuration: Configuration
    let core: LoopbackCore
    let receiverCore: ReceiverCore

    private let listener = LocalListener()

    /// Creates a loopback; ``start()`` opens it.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let core = LoopbackCore(rules: configuration.faults)
        self.core = core
        receiverCore = ReceiverCore { event in
            switch event {
            case .publishStarted(let app, let stream): core.emit(.publishStarted(app: app, stream: stream))
            case .publishEnded(let summary): core.emit(.publishEnded(summary))
            default: core.emit(.receiver(event))
            }
        }
    }

    /// Binds and starts accepting connections; returns the bound port.
    @discardableResult
    public func start() throws -> Int {
        var upstream: UpstreamAddress?
        if let text = configuration.upstream {
            guard let address = UpstreamAddress(text) else { throw FaultLoopbackError.invalidUpstream(text) }
            upstream = address
        }
        let setup = ConnectionSetup(core: core, receiverCore: receiverCore, upstream: upstream,
                                    connectTimeout: configuration.upstreamConnectTimeout,
                                    receiverConfiguration: RTMPReceiver.Configuration(
                                        host: configuration.host, port: configuration.port,
                                        recordDirectory: configuration.recordDirectory,
                                        authentication: configuration.authentication))
        core.markStarted()
        return try listener.start(host: configuration.host, port: configuration.port) { setup.initialize($0) }
    }

    /// The bound port (0 before `start()`).
    public var port: Int { listener.port }

    /// Connections accepted so far.
    public var connectionCount: Int {
        core.connectionCount
    }

    /// The rules in force.
    public var faults: [FaultRule] {
        core.rules
    }

    /// Replaces the rules, for new connections and for open ones: rules that were already
    /// injected on a connection and are still in the list stay injected (a stall goes on);
    /// removing a stall, throttle or latency rule ends it; a new rule is due on an open connection
    /// as soon as its trigger holds (its time measured from the connection's start). `refuse` is
    /// only decided on accept, and an open relayed connection is never switched to terminating.
    public func setFaults(_ rules: [FaultRule]) {
        for channel in core.setRules(rules) {
            channel.pipeline.fireUserInboundEventTriggered(FaultRulesChanged())
        }
    }

    /// Closes the listener and every connection (terminated publishes end with reason "stop"),
    /// fails pending waiters, finishes event streams and shuts down the event loop. Idempotent.
    public func stop() {
        listener.stop {
            for channel in receiverCore.beginStop() {
                try? channel.eventLoop.submit {
                    channel.pipeline.fireUserInboundEventTriggered(ReceiverStopEvent())
                }.wait()
            }
            for channel in core.beginStop() {
                if channel.isActive {
                    core.noteCloseReasonIfClient(channel, "loopback stopped")
                }
                try? channel.close().wait()
            }
            receiverCore.finishStop()
            core.finishEvents()
        }
    }

    /// A new event stream; it sees events from now on and finishes when the loopback stops.
    public func makeEventStream() -> AsyncStream<LoopbackEvent> {
        core.makeEventStream()
    }

    /// Terminating mode: the summary of `stream` once its publish has ended (see
    /// ``RTMPReceiver/waitForPublishEnd(stream:timeout:)``). Throws ``ReceiverError/timeout(stream:)``
    /// after `timeout`, ``ReceiverError/stopped`` when the loopback stops.
    public func waitForPublishEnd(stream: String, timeout: Duration) async throws -> PublishSummary {
        try await receiverCore.waitForPublishEnd(stream: stream, timeout: timeout)
    }

    /// Terminating mode: summaries of all publishes that have ended, oldest first.
    public func summaries() -> [PublishSummary] {
        receiverCore.summaries()
    }

    deinit {
        stop()
    }
}
