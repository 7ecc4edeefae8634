import NIOCore
import NIOPosix

/// A UDP relay on 127.0.0.1 in front of a real SRT listener that injects faults on cue, so
/// that an app's handling of SRT's failures (a listener that never answers, a path that dies,
/// an outage, packet loss) can be tested against the real peer.
///
/// SRT runs over UDP, so the relay forwards datagrams: each caller (an address whose first
/// datagram is a handshake) gets a session and a socket of its own toward the listener, and
/// what the listener answers goes back to that caller. Faults are ``SRTFaultRule``s (see
/// ``SRTFaultSpec`` for their text form); each drops datagrams as a network would, none
/// answers for the listener. One event loop thread for every session. `start()` and `stop()`
/// block briefly; do not call them from the relay's event loop.
public final class SRTRelay: Sendable {
    /// The configuration it was created with.
    public let configuration: Configuration
    let core: SRTRelayCore

    /// Kernel buffers of each socket: a burst of a few Mbit/s is not dropped by the relay itself.
    static let socketBufferBytes = 1 << 20

    private struct Runtime {
        var group: MultiThreadedEventLoopGroup?
        var channel: (any Channel)?
        var port = 0
        var started = false
        var stopped = false
    }

    private let runtime = Locked(Runtime())

    /// Creates a relay; ``start()`` opens it.
    public init(configuration: Configuration) {
        self.configuration = configuration
        core = SRTRelayCore(rules: configuration.faults)
    }

    /// Resolves the upstream, binds and starts relaying; returns the bound port.
    @discardableResult
    public func start() throws -> Int {
        guard let address = UpstreamAddress(srt: configuration.upstream) else {
            throw FaultLoopbackError.invalidSRTUpstream(configuration.upstream)
        }
        try runtime.withLock { r in
            if r.stopped { throw ReceiverError.stopped }
            if r.started { throw ReceiverError.alreadyStarted }
            r.started = true
        }
        let upstream = try SocketAddress.makeAddressResolvingHost(address.host, port: address.port)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let core = core
        let idleTimeout = TimeAmount.nanoseconds(configuration.idleTimeout.totalNanoseconds)
        core.markStarted()
        do {
            let channel = try DatagramBootstrap(group: group)
                .channelOption(.socketOption(.so_reuseaddr), value: 1)
                .channelOption(.socketOption(.so_rcvbuf), value: Self.socketBufferBytes)
                .channelOption(.socketOption(.so_sndbuf), value: Self.socketBufferBytes)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            SRTRelayListenHandler(core: core, upstream: upstream, idleTimeout: idleTimeout))
                    }
                }
                .bind(host: configuration.host, port: configuration.port)
                .wait()
            let bound = channel.localAddress?.port ?? 0
            let keep = runtime.withLock { r in
                if r.stopped { return false }
                r.group = group
                r.channel = channel
                r.port = bound
                return true
            }
            guard keep else {
                try? channel.close().wait()
                try? group.syncShutdownGracefully()
                throw ReceiverError.stopped
            }
            return bound
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
    }

    /// The bound port (0 before `start()`).
    public var port: Int { runtime.withLock { $0.port } }

    /// Sessions opened so far.
    public var sessionCount: Int { core.sessionCount }

    /// The rules in force.
    public var faults: [SRTFaultRule] { core.rules }

    /// A new event stream; it sees events from now on and finishes when the relay stops.
    public func makeEventStream() -> AsyncStream<SRTRelayEvent> {
        core.makeEventStream()
    }

    /// Closes the listening socket and every session (each ends with "the relay stopped"),
    /// shuts the event loop down and finishes the event streams. Idempotent.
    public func stop() {
        let (first, group, channel): (Bool, MultiThreadedEventLoopGroup?, (any Channel)?) = runtime.withLock { r in
            if r.stopped { return (false, nil, nil) }
            r.stopped = true
            defer { r.group = nil; r.channel = nil }
            return (true, r.group, r.channel)
        }
        guard first else { return }
        core.beginStop()
        try? channel?.close().wait()
        try? group?.syncShutdownGracefully()
        core.finishEvents()
    }

    deinit {
        stop()
    }
}
