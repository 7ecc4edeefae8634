import NIOCore

/// The first handler of a receiver connection: closes it when the peer breaks a time or memory
/// bound of ``RTMPReceiver/Limits`` that no later handler can see.
///
/// - The handshake must be done within `handshakeTimeout` (``HandshakeHandler`` reports it
///   through ``handshakeCompleted()``).
/// - A peer that sends nothing for `idleTimeout` is gone.
/// - Replies queued toward a peer that does not read them stop at `maxUnreadReplyBytes`: the
///   channel's write buffer high-water mark, whose crossing makes the channel unwritable.
final class ConnectionGuard: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let limits: RTMPReceiver.Limits
    private let core: ReceiverCore
    private var remote = "?"
    private var handshakeDone = false
    private var lastRead = NIODeadline.now()
    private var handshakeTimer: Scheduled<Void>?
    private var idleTimer: Scheduled<Void>?
    private var closing = false

    init(limits: RTMPReceiver.Limits, core: ReceiverCore) {
        self.limits = limits
        self.core = core
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let mark = max(2, limits.maxUnreadReplyBytes)
        context.channel.setOption(.writeBufferWaterMark, value: .init(low: mark / 2, high: mark)).whenFailure { _ in }
        if context.channel.isActive { start(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimers()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelTimers()
        context.fireChannelInactive()
    }

    /// The timers hold the handler and its context: a closed connection lets them go.
    private func cancelTimers() {
        handshakeTimer?.cancel()
        idleTimer?.cancel()
    }

    private func start(context: ChannelHandlerContext) {
        guard handshakeTimer == nil else { return }
        if context.channel.remoteAddress != nil { remote = ReceiverCore.remote(of: context.channel) }
        lastRead = .now()
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        handshakeTimer = context.eventLoop.scheduleTask(in: .nanoseconds(limits.handshakeTimeout.totalNanoseconds)) {
            let (handler, context) = bound.value
            if !handler.handshakeDone { handler.close(context, .handshakeTimeout) }
        }
        scheduleIdleCheck(context: context, at: lastRead + .nanoseconds(limits.idleTimeout.totalNanoseconds))
    }

    private func scheduleIdleCheck(context: ChannelHandlerContext, at deadline: NIODeadline) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        idleTimer = context.eventLoop.scheduleTask(deadline: deadline) {
            let (handler, context) = bound.value
            let due = handler.lastRead + .nanoseconds(handler.limits.idleTimeout.totalNanoseconds)
            if due <= .now() {
                handler.close(context, .idleTimeout)
            } else {
                handler.scheduleIdleCheck(context: context, at: due)
            }
        }
    }

    /// Called by ``HandshakeHandler`` (same event loop) once the handshake is done.
    func handshakeCompleted(channel: any Channel) {
        handshakeDone = true
        handshakeTimer?.cancel()
        core.handshakeCompleted(channel)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastRead = .now()
        context.fireChannelRead(data)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if !context.channel.isWritable {
            close(context, .unreadReplies)
        }
        context.fireChannelWritabilityChanged()
    }

    private func close(_ context: ChannelHandlerContext, _ limit: ReceiverLimit) {
        guard !closing else { return }
        closing = true
        core.noteLimit(limit, remote: remote)
        context.close(promise: nil)
    }
}
