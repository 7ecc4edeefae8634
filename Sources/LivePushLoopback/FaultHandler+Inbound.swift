import LivePushWire
import NIOCore

/// Client → server: counting, the stall, throttle and latency faults on what the client sends.
extension FaultHandler {
    // MARK: Inbound (client → server)

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !finished else { return }
        if let action = firstReadAction {
            firstReadAction = nil
            bytesIn += unwrapInboundIn(data).readableBytes
            switch action {
            case .reset(let rule): reset(rule, reason: "reset by fault \(rule)")
            case .close(let rule): closeNow(rule)
            }
            return
        }
        var buffer = unwrapInboundIn(data)
        if let pending = resetAtBytes, bytesIn + buffer.readableBytes >= pending.limit {
            let keep = pending.limit - bytesIn
            if keep > 0, let slice = buffer.readSlice(length: keep) {
                bytesIn += keep
                count(slice)
                enqueue(slice)
                drainInbound()
            }
            resetAtBytes = nil
            reset(pending.rule, reason: "reset by fault \(pending.rule) after \(bytesIn) bytes")
            return
        }
        bytesIn += buffer.readableBytes
        count(buffer)
        enqueue(buffer)
        evaluate()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Read-complete is fired by drainInbound after the bytes it passes on.
    }

    /// The bytes of `buffer` past what is left of the RTMP handshake (`remaining`, counted down):
    /// where RTMP chunks start, in either direction.
    static func pastHandshake(_ buffer: ByteBuffer, remaining: inout Int) -> ByteBufferView.SubSequence {
        let view = buffer.readableBytesView[...]
        let skip = min(remaining, view.count)
        remaining -= skip
        return view.dropFirst(skip)
    }

    /// Feeds a copy of the client's bytes to a chunk decoder to count RTMP messages.
    func count(_ buffer: ByteBuffer) {
        let view = Self.pastHandshake(buffer, remaining: &handshakeRemaining)
        guard decoding, !view.isEmpty else { return }
        decoder.append(view)
        do {
            while let message = try decoder.nextMessage() {
                messages += 1
                if !clientPublished, message.type == .commandAMF0 || message.type == .commandAMF3,
                   RTMPSessionHandler.commandName(message) == "publish" {
                    clientPublished = true
                    sendReconnectRequestIfReady()
                }
            }
        } catch {
            decoding = false  // not RTMP after all; stop counting
        }
    }

    func enqueue(_ buffer: ByteBuffer) {
        guard buffer.readableBytes > 0 else { return }
        inbound.append(Delayed(buffer: buffer, due: .now() + latency))
        inboundBytes += buffer.readableBytes
    }

    var canRead: Bool {
        if finished || stalled { return false }
        if throttleRate != nil { return inboundBytes == 0 }
        return inboundBytes < Self.maxQueuedBytes
    }

    func read(context: ChannelHandlerContext) {
        if canRead {
            context.read()
        } else {
            pendingRead = true
        }
    }

    func drainInbound() {
        guard let context else { return }
        var passed = false
        let now = NIODeadline.now()
        while !finished, !stalled, let first = inbound.first {
            if first.due > now {
                armInboundTimer(at: first.due)
                break
            }
            var chunk = first.buffer
            if throttleRate != nil {
                let allowed = Int(budget)
                if allowed <= 0 { break }  // the next tick continues
                if allowed < chunk.readableBytes {
                    let head = chunk.readSlice(length: allowed)!
                    inbound[inbound.startIndex].buffer = chunk
                    chunk = head
                } else {
                    inbound.removeFirst()
                }
                budget -= Double(chunk.readableBytes)
            } else {
                inbound.removeFirst()
            }
            inboundBytes -= chunk.readableBytes
            context.fireChannelRead(wrapInboundOut(chunk))
            passed = true
        }
        if passed && !finished { context.fireChannelReadComplete() }
        if pendingRead && canRead {
            pendingRead = false
            context.read()
        }
    }

    func armInboundTimer(at due: NIODeadline) {
        arm(\.inboundTimer, at: due) { $0.drainInbound() }
    }

    /// Arms `timer` for `due` unless it already fires by then; `drain` runs when it fires.
    func arm(_ timer: ReferenceWritableKeyPath<FaultHandler, (task: Scheduled<Void>, at: NIODeadline)?>, at due: NIODeadline,
             _ drain: @escaping (FaultHandler) -> Void) {
        guard let context else { return }
        if let armed = self[keyPath: timer], armed.at <= due { return }
        self[keyPath: timer]?.task.cancel()
        let task = context.eventLoop.assumeIsolated().scheduleTask(deadline: due) { [self] in
            self[keyPath: timer] = nil
            drain(self)
        }
        self[keyPath: timer] = (task, due)
    }

    func scheduleThrottleTick() {
        guard let context, let rate = throttleRate else { return }
        throttleTask = context.eventLoop.assumeIsolated().scheduleTask(in: Self.tick) { [self] in
            throttleTask = nil
            guard throttleRate == rate, !finished else { return }
            let perTick = Double(rate) / 10
            // No saving up while idle: at most one tick's worth (and one byte) of burst.
            budget = min(budget + perTick, max(perTick, 1))
            scheduleThrottleTick()
            drainInbound()
        }
    }
}
