import NIOCore

/// On the relay's listening socket: hands each caller's datagram to the ``SRTRelayHub`` and
/// ends idle sessions once a second. The hub lives as long as the socket.
final class SRTRelayListenHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private let core: SRTRelayCore
    private let upstream: SocketAddress
    private let idleTimeout: TimeAmount
    private var hub: SRTRelayHub?
    private var sweep: RepeatedTask?

    init(core: SRTRelayCore, upstream: SocketAddress, idleTimeout: TimeAmount) {
        self.core = core
        self.upstream = upstream
        self.idleTimeout = idleTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let hub = SRTRelayHub(core: core, listenChannel: context.channel, upstream: upstream, idleTimeout: idleTimeout)
        self.hub = hub
        let bound = NIOLoopBound(hub, eventLoop: context.eventLoop)
        sweep = context.eventLoop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { _ in
            bound.value.sweepIdle()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        hub?.fromCaller(unwrapInboundIn(data))
    }

    func channelInactive(context: ChannelHandlerContext) {
        sweep?.cancel()
        sweep = nil
        hub?.endAll(reason: "the relay stopped")
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        sweep?.cancel()
        hub?.endAll(reason: "the relay stopped")
        hub = nil
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A caller gone away (ICMP port unreachable) is no error of the relay's.
    }
}
