import NIOCore

/// On a session's socket toward the listener: hands what the listener sends to the
/// ``SRTRelayHub``, for the session's caller.
final class SRTRelayUpstreamHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private let hub: SRTRelayHub
    private let session: SRTRelaySession

    init(hub: SRTRelayHub, session: SRTRelaySession) {
        self.hub = hub
        self.session = session
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        hub.fromListener(unwrapInboundIn(data), session: session)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // ICMP "port unreachable" while the listener is away surfaces as ECONNREFUSED on a UDP
        // socket: not an end of the session (SRT's own timeouts decide that).
    }
}
