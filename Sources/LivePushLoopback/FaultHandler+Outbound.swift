import LivePushWire
import NIOCore

/// Server → client: latency on what the server writes.
extension FaultHandler {
    // MARK: Outbound (server → client)

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        var buffer = unwrapOutboundIn(data)
        if let rule = truncateRule, !finished {
            truncateRule = nil
            let half = max(1, buffer.readableBytes / 2)
            let head = buffer.readSlice(length: min(half, buffer.readableBytes)) ?? buffer
            finished = true
            core.noteCloseReason(connection: connection, "closed after a truncated reply (fault \(rule))")
            context.writeAndFlush(wrapOutboundOut(head), promise: nil)
            promise?.fail(ChannelError.ioOnClosedChannel)
            context.close(promise: nil)
            return
        }
        if outboundDecoder != nil { followServerMessages(buffer) }
        if stalled || latency > .zero || !outbound.isEmpty {
            outbound.append(DelayedWrite(buffer: buffer, promise: promise, due: .now() + latency))
            drainOutbound()
            return
        }
        context.write(data, promise: promise)
        sendReconnectRequestIfReady()
    }

    func flush(context: ChannelHandlerContext) {
        // Queued writes are flushed by drainOutbound.
        context.flush()
    }

    func drainOutbound() {
        guard let context else { return }
        var wrote = false
        let now = NIODeadline.now()
        while !stalled, let first = outbound.first {
            if first.due > now {
                armOutboundTimer(at: first.due)
                break
            }
            outbound.removeFirst()
            context.write(wrapOutboundOut(first.buffer), promise: first.promise)
            wrote = true
        }
        if wrote { context.flush() }
    }

    func armOutboundTimer(at due: NIODeadline) {
        arm(\.outboundTimer, at: due) { $0.drainOutbound() }
    }
}
