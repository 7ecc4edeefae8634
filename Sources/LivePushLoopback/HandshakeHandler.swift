import LivePushWire
import NIOCore

/// Performs the server handshake, then passes all further bytes through unchanged.
final class HandshakeHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var handshake: RTMPHandshake
    private var pending: [UInt8] = []

    init(uptimeMs: UInt32 = 0) {
        handshake = RTMPHandshake()
        handshake.uptimeMs = uptimeMs
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        if handshake.state == .done {
            context.fireChannelRead(data)
            return
        }
        pending += buffer.readBytes(length: buffer.readableBytes) ?? []
        do {
            while handshake.state != .done {
                switch try handshake.step(&pending) {
                case .needMore:
                    return
                case .send(let bytes):
                    context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
                case .completed:
                    break
                }
            }
            if !pending.isEmpty {
                let rest = context.channel.allocator.buffer(bytes: pending)
                pending = []
                context.fireChannelRead(wrapInboundOut(rest))
            }
        } catch {
            context.fireErrorCaught(error)
        }
    }
}
