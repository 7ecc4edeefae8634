import LivePushWire
import NIOCore

/// Chunks outgoing ``RTMPMessage``s (switching chunk size after a Set Chunk Size it sends).
final class ChunkEncoderHandler: ChannelOutboundHandler {
    typealias OutboundIn = RTMPMessage
    typealias OutboundOut = ByteBuffer

    private var encoder = RTMPChunkEncoder()
    private var scratch: [UInt8] = []

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let message = unwrapOutboundIn(data)
        scratch.removeAll(keepingCapacity: true)
        encoder.encode(message, into: &scratch)
        context.write(wrapOutboundOut(context.channel.allocator.buffer(bytes: scratch)), promise: promise)
    }
}
