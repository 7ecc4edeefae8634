import NIOCore
import NIOPosix

/// Builds the pipeline of each accepted connection: numbering, the ``FaultHandler``, and then
/// either the local RTMP session or the relay to the upstream server.
struct ConnectionSetup: Sendable {
    let core: LoopbackCore
    let receiverCore: ReceiverCore
    let upstream: UpstreamAddress?
    let connectTimeout: Duration
    let receiverConfiguration: RTMPReceiver.Configuration

    func initialize(_ channel: any Channel) -> EventLoopFuture<Void> {
        guard let connection = core.accept(channel) else {
            return channel.close()
        }
        core.emit(.accepted(connection: connection))
        let faults = FaultHandler(connection: connection, core: core, rules: core.rules)
        let pipeline = channel.pipeline.syncOperations
        do {
            try pipeline.addHandler(faults)
            if upstream == nil || faults.hasRTMPLevelRules || faults.endsBeforeRTMP {
                guard receiverCore.register(channel, limit: receiverConfiguration.limits.maxConnections) else { return channel.close() }
                try ReceiverPipeline.add(to: pipeline, core: receiverCore, configuration: receiverConfiguration, faults: faults)
                return channel.eventLoop.makeSucceededVoidFuture()
            }
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return relay(channel, connection: connection)
    }

    private func relay(_ channel: any Channel, connection: Int) -> EventLoopFuture<Void> {
        guard let upstream else { return channel.eventLoop.makeSucceededVoidFuture() }
        let core = self.core
        let clientGlue = RelayGlueHandler()
        do {
            // Half-closure lets a FIN travel the relay after the data (see RelayGlueHandler).
            try channel.syncOptions?.setOption(.allowRemoteHalfClosure, value: true)
            try channel.pipeline.syncOperations.addHandler(clientGlue)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        let boundGlue = NIOLoopBound(clientGlue, eventLoop: channel.eventLoop)
        let upstreamLabel = upstream.description
        return ClientBootstrap(group: channel.eventLoop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .connectTimeout(.nanoseconds(connectTimeout.totalNanoseconds))
            .channelInitializer { upstreamChannel in
                upstreamChannel.eventLoop.makeCompletedFuture {
                    let upstreamGlue = RelayGlueHandler(inactiveNote: {
                        core.noteCloseReason(connection: connection, "upstream \(upstreamLabel) closed the connection")
                    })
                    RelayGlueHandler.link(boundGlue.value, upstreamGlue)
                    try upstreamChannel.pipeline.syncOperations.addHandler(upstreamGlue)
                }
            }
            .connect(host: upstream.host, port: upstream.port)
            .flatMapError { error in
                core.noteCloseReason(connection: connection, "upstream \(upstreamLabel) unreachable: \(error)")
                core.emit(.closed(connection: connection, reason: core.takeCloseReason(connection: connection) ?? "upstream unreachable"))
                return channel.eventLoop.makeFailedFuture(error)
            }
            .flatMap { upstreamChannel in
                guard core.register(upstreamChannel) else {
                    upstreamChannel.close(promise: nil)
                    return channel.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel)
                }
                core.emit(.upstreamConnected(connection: connection))
                return channel.eventLoop.makeSucceededVoidFuture()
            }
    }
}
