import LivePushWire
import NIOCore

/// Performs the server handshake, then passes all further bytes through unchanged.
final class HandshakeHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var handshake: RTMPHandshake
    private var pending: [UInt8] = []
    /// Told once the handshake is done (the connection's time limit for it ends there).
    private let completed: ((any Channel) -> Void)?

    init(uptimeMs: UInt32 = 0, completed: ((any Channel) -> Void)? = nil) {
        handshake = RTMPHandshake()
        handshake.uptimeMs = uptimeMs
        self.completed = completed
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
                    completed?(context.channel)
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
