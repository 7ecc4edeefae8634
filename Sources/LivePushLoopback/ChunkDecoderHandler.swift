import LivePushWire
import NIOCore

/// Decodes the chunk stream into ``RTMPMessage``s (applying the peer's Set Chunk Size and Abort)
/// and sends Acknowledgements whenever the peer's acknowledgement window has been received.
final class ChunkDecoderHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = RTMPMessage
    typealias OutboundOut = RTMPMessage

    private var decoder = RTMPChunkDecoder()
    /// Window announced by the peer's Window Acknowledgement Size (type 5).
    private(set) var acknowledgementWindow: UInt64
    private var bytesReceived: UInt64 = 0
    private var bytesAcknowledged: UInt64 = 0

    private let core: ReceiverCore?

    init(acknowledgementWindow: UInt32, limits: RTMPReceiver.Limits? = nil, core: ReceiverCore? = nil) {
        self.acknowledgementWindow = UInt64(acknowledgementWindow)
        self.core = core
        if let limits {
            decoder.maxBufferedPayloadBytes = limits.maxChunkStreamBytes
            decoder.maxChunkStreams = limits.maxChunkStreams
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        bytesReceived += UInt64(buffer.readableBytes)
        decoder.append(buffer.readableBytesView)
        do {
            while let message = try decoder.nextMessage() {
                if message.type == .windowAcknowledgementSize, let size = message.payloadUInt32, size > 0 {
                    acknowledgementWindow = UInt64(size)
                }
                context.fireChannelRead(wrapInboundOut(message))
                if !context.channel.isActive { return }
            }
        } catch {
            if error.isLimit, let core {
                core.noteLimit(.chunkStreamBuffers, remote: ReceiverCore.remote(of: context.channel))
            }
            context.fireErrorCaught(error)
            return
        }
        if acknowledgementWindow > 0 && bytesReceived - bytesAcknowledged >= acknowledgementWindow {
            bytesAcknowledged = bytesReceived
            let ack = RTMPMessage.acknowledgement(sequenceNumber: UInt32(truncatingIfNeeded: bytesReceived))
            context.writeAndFlush(wrapOutboundOut(ack), promise: nil)
        }
    }
}
