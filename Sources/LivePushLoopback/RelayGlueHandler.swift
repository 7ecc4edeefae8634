import NIOCore

/// One half of a relay: what one channel reads is written to its partner's channel, and reads
/// are held back while the partner's channel is not writable (backpressure). Closing either
/// side closes the other. Both channels must share one event loop.
final class RelayGlueHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var partner: RelayGlueHandler?
    private var context: ChannelHandlerContext?
    private var pendingRead = false
    private var partnerClosed = false
    /// Noted as the connection's close reason when this side goes inactive first.
    private let inactiveNote: (@Sendable () -> Void)?

    init(inactiveNote: (@Sendable () -> Void)? = nil) {
        self.inactiveNote = inactiveNote
    }

    /// Links two handlers; call on their event loop before either channel is active.
    static func link(_ a: RelayGlueHandler, _ b: RelayGlueHandler) {
        a.partner = b
        b.partner = a
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if partnerClosed { context.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        partner = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        partner?.partnerWrite(unwrapInboundIn(data))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        partner?.partnerFlush()
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if partner?.partnerIsActive == true { inactiveNote?() }
        partner?.partnerClose()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { partner?.partnerBecameWritable() }
        context.fireChannelWritabilityChanged()
    }

    func read(context: ChannelHandlerContext) {
        if partner?.partnerIsWritable ?? true {
            context.read()
        } else {
            pendingRead = true
        }
    }

    // MARK: Called by the partner

    private func partnerWrite(_ buffer: ByteBuffer) {
        context?.write(wrapOutboundOut(buffer), promise: nil)
    }

    private func partnerFlush() {
        context?.flush()
    }

    private var partnerIsWritable: Bool {
        context?.channel.isWritable ?? true
    }

    private var partnerIsActive: Bool {
        context?.channel.isActive ?? false
    }

    private func partnerBecameWritable() {
        if pendingRead, let context {
            pendingRead = false
            context.read()
        }
    }

    private func partnerClose() {
        partnerClosed = true
        if let context {
            context.flush()
            context.close(promise: nil)
        }
    }
}
