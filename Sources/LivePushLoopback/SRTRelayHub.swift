import NIOCore
import NIOPosix

/// The I/O of an ``SRTRelay``, on its one event loop: datagrams from callers arrive on the
/// listening socket and go on through each caller's own socket toward the listener (so the
/// listener tells callers apart by port, as it would without the relay); what comes back goes
/// out of the listening socket to the caller's address. ``SRTRelaySession`` decides what is
/// forwarded.
final class SRTRelayHub {
    let core: SRTRelayCore
    let listenChannel: any Channel
    let upstream: SocketAddress
    let idleTimeout: TimeAmount
    private var sessions: [SocketAddress: SRTRelaySession] = [:]

    init(core: SRTRelayCore, listenChannel: any Channel, upstream: SocketAddress, idleTimeout: TimeAmount) {
        self.core = core
        self.listenChannel = listenChannel
        self.upstream = upstream
        self.idleTimeout = idleTimeout
    }

    // MARK: Caller → listener

    func fromCaller(_ envelope: AddressedEnvelope<ByteBuffer>) {
        let packet = SRTPacket(envelope.data.readableBytesView)
        var session = sessions[envelope.remoteAddress]
        if let known = session, packet.isHandshake, let id = packet.handshakeSocketID, let callerID = known.callerSocketID,
           id != callerID, packet.isInduction || known.established {
            end(known, reason: "the caller connected again from the same address")
            session = nil
        }
        if session == nil {
            // Only a handshake opens a session: what a caller whose session ended still sends
            // (to a path that is dead, or to a listener that closed) goes nowhere.
            guard packet.isHandshake else { return }
            session = start(caller: envelope.remoteAddress, socketID: packet.handshakeSocketID)
        }
        guard let session else { return }
        let (forward, events) = session.admit(packet, fromCaller: true)
        for event in events { core.emit(event) }
        if forward {
            if let channel = session.upstream {
                channel.writeAndFlush(AddressedEnvelope(remoteAddress: upstream, data: envelope.data), promise: nil)
            } else {
                session.pending.append(envelope.data)
            }
        }
        if packet.kind == .shutdown { end(session, reason: "the caller closed the connection") }
    }

    private func start(caller: SocketAddress, socketID: UInt32?) -> SRTRelaySession? {
        guard let (number, rules) = core.nextSession() else { return nil }
        let session = SRTRelaySession(number: number, caller: caller, callerSocketID: socketID, rules: rules,
                                      relayStarted: core.startTime)
        sessions[caller] = session
        core.emit(.sessionStarted(session: number, caller: "\(caller.ipAddress ?? "?"):\(caller.port ?? 0)"))
        let hub = NIOLoopBound(self, eventLoop: listenChannel.eventLoop)
        let boundSession = NIOLoopBound(session, eventLoop: listenChannel.eventLoop)
        DatagramBootstrap(group: listenChannel.eventLoop)
            .channelOption(.socketOption(.so_rcvbuf), value: SRTRelay.socketBufferBytes)
            .channelOption(.socketOption(.so_sndbuf), value: SRTRelay.socketBufferBytes)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(SRTRelayUpstreamHandler(hub: hub.value, session: boundSession.value))
                }
            }
            .bind(host: upstream.protocol == .inet6 ? "::" : "0.0.0.0", port: 0)
            .whenComplete { result in
                let session = boundSession.value
                switch result {
                case .success(let channel):
                    guard !session.ended else {
                        channel.close(promise: nil)
                        return
                    }
                    session.upstream = channel
                    for datagram in session.pending {
                        channel.write(AddressedEnvelope(remoteAddress: hub.value.upstream, data: datagram), promise: nil)
                    }
                    session.pending = []
                    channel.flush()
                case .failure(let error):
                    hub.value.end(session, reason: "no socket toward the listener: \(error)")
                }
            }
        return session
    }

    // MARK: Listener → caller

    func fromListener(_ envelope: AddressedEnvelope<ByteBuffer>, session: SRTRelaySession) {
        guard !session.ended, envelope.remoteAddress == upstream else { return }
        let packet = SRTPacket(envelope.data.readableBytesView)
        let (forward, events) = session.admit(packet, fromCaller: false)
        for event in events { core.emit(event) }
        if forward {
            listenChannel.writeAndFlush(AddressedEnvelope(remoteAddress: session.caller, data: envelope.data), promise: nil)
        }
        if packet.kind == .shutdown { end(session, reason: "the listener closed the connection") }
    }

    // MARK: Ending

    func end(_ session: SRTRelaySession, reason: String) {
        guard !session.ended else { return }
        session.ended = true
        if sessions[session.caller] === session { sessions[session.caller] = nil }
        session.pending = []
        // What was just written (a shutdown) goes out before the socket closes.
        session.upstream?.close(promise: nil)
        core.emit(.sessionEnded(session: session.number, reason: reason, session.figures))
    }

    /// Ends the sessions nothing was heard of for ``idleTimeout``.
    func sweepIdle(now: NIODeadline = .now()) {
        for session in sessions.values where now - session.lastActivity >= idleTimeout {
            end(session, reason: "nothing heard for \(FaultSpec.format(.nanoseconds(idleTimeout.nanoseconds)))")
        }
    }

    func endAll(reason: String) {
        for session in sessions.values.sorted(by: { $0.number < $1.number }) { end(session, reason: reason) }
    }
}
