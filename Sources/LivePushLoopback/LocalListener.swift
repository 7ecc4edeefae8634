import NIOCore
import NIOPosix

/// The listening socket and the one-thread event loop behind ``RTMPReceiver`` and
/// ``FaultLoopback``: bind once, report the port, close once.
final class LocalListener: Sendable {
    private struct Runtime {
        var group: MultiThreadedEventLoopGroup?
        var serverChannel: (any Channel)?
        var port = 0
        var started = false
        var stopped = false
    }

    private let runtime = Locked(Runtime())

    /// The bound port (0 before `start`).
    var port: Int { runtime.withLock { $0.port } }

    /// Binds `host:port` and accepts connections, each set up by `initializer`. Throws
    /// ``ReceiverError/alreadyStarted`` on a second call, ``ReceiverError/stopped`` when
    /// `stop` came first.
    func start(host: String, port: Int,
               initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>) throws -> Int {
        try runtime.withLock { r in
            if r.started { throw ReceiverError.alreadyStarted }
            r.started = true
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 511)  // nginx's default: a burst of connects is not dropped and retried a second later
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer(initializer)
        do {
            let channel = try bootstrap.bind(host: host, port: port).wait()
            let bound = channel.localAddress?.port ?? 0
            let keep = runtime.withLock { r in
                if r.stopped { return false }
                r.group = group
                r.serverChannel = channel
                r.port = bound
                return true
            }
            if !keep {
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

    /// Closes the listener, runs `closeConnections` (the owner ends its connections its own
    /// way), then shuts the event loop down. Only the first call does anything.
    func stop(closeConnections: () -> Void) {
        let (first, group, server): (Bool, MultiThreadedEventLoopGroup?, (any Channel)?) = runtime.withLock { r in
            if r.stopped { return (false, nil, nil) }
            r.stopped = true
            defer { r.group = nil; r.serverChannel = nil }
            return (true, r.group, r.serverChannel)
        }
        guard first else { return }
        try? server?.close().wait()
        closeConnections()
        try? group?.syncShutdownGracefully()
    }
}
