import NIOCore

/// One half of a relay: what one channel reads is written to its partner's channel, and reads
/// are held back while the partner's channel is not writable (backpressure). Closing either
/// side closes the other, unless the client's side was told to leave the upstream open
/// (``UpstreamOnClientClose``): the upstream side is then orphaned, reads nothing on, writes
/// nothing, and closes after its hold time. Both channels must share one event loop.
///
/// A peer that ends its side gracefully (a FIN: both channels allow remote half-closure) is
/// relayed as a TCP path relays it: the partner's side is shut for output once everything read
/// before the FIN is written, and the relay keeps carrying the other direction until that ends
/// too. Closing both sides at the client's FIN instead ended the client's lingering close at
/// once, while the server had not read the stream's end yet; straight to the server, a
/// graceful push ends only once the server has closed its side (``RelayNginxTests``).
final class RelayGlueHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var partner: RelayGlueHandler?
    private var context: ChannelHandlerContext?
    private var pendingRead = false
    private var partnerClosed = false
    /// This side's peer has sent its FIN.
    private var inputClosed = false
    /// This side has sent its FIN, after everything the partner read.
    private var outputClosed = false
    /// What to do with the partner when this side closes.
    private var onClose = UpstreamOnClientClose.close
    /// Set on the upstream side once its client side is gone for good.
    private var orphaned = false
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
        guard !orphaned else { return }  // silent: what the server says goes nowhere
        partner?.partnerWrite(unwrapInboundIn(data))
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            inputClosed = true
            guard case .close = onClose, let partner else {
                // A path left open (or no partner yet) carries no FIN: end this side as before.
                return context.close(promise: nil)
            }
            partner.partnerFinishedSending()
            return closeIfBothDirectionsEnded(context)
        }
        if let decision = event as? UpstreamOnClientClose {
            onClose = decision
            // Nothing crosses a dead path in either direction: when the server gives up on its
            // side, the client must not hear of it either.
            partner?.onClose = decision
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        partner?.partnerFlush()
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        // The partner's peer ending first (and this side only following) is not worth a note.
        if partner?.partnerIsActive == true, partner?.inputClosed == false { inactiveNote?() }
        switch onClose {
        case .close: partner?.partnerClose()
        case .keepOpen(let hold): partner?.partnerOrphan(closingAfter: hold)
        }
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

    private func partnerOrphan(closingAfter hold: Duration?) {
        orphaned = true
        partner = nil
        guard let context, let hold else { return }
        let channel = context.channel
        channel.eventLoop.scheduleTask(in: .nanoseconds(hold.totalNanoseconds)) {
            channel.close(promise: nil)
        }
    }

    /// The partner's peer sent its FIN: send ours once what it sent before is written.
    private func partnerFinishedSending() {
        guard let context, !outputClosed else { return }
        let empty = context.channel.allocator.buffer(capacity: 0)
        context.writeAndFlush(wrapOutboundOut(empty)).assumeIsolated().whenComplete { [self] _ in
            outputClosed = true
            context.close(mode: .output, promise: nil)
            closeIfBothDirectionsEnded(context)
        }
    }

    private func closeIfBothDirectionsEnded(_ context: ChannelHandlerContext) {
        if inputClosed && outputClosed { context.close(promise: nil) }
    }

    private func partnerClose() {
        partnerClosed = true
        if let context {
            context.flush()
            context.close(promise: nil)
        }
    }
}
