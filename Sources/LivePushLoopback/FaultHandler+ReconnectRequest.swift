import LivePushWire
import NIOCore

/// The `reconnect-request` fault: an Enhanced RTMP v2 `NetConnection.Connect.ReconnectRequest`
/// sent to a client that publishes, whether the loopback answers it or relays it to a real
/// server. The request is written between two of the server's messages (the server's bytes are
/// followed through a chunk decoder), in a chunk stream of its own and in the server's chunk
/// size, so the client reads the server's messages as they were.
extension FaultHandler {
    /// A chunk stream no server of ours uses: the request's fresh header there leaves the
    /// server's own chunk streams' headers as the client knows them.
    static let reconnectChunkStreamID: UInt32 = 62

    /// Bytes of the handshake the server sends (S0 + S1 + S2) before its chunk stream.
    static let serverHandshakeSize = 1 + 1536 + 1536

    /// A decoder of the server's messages, when a `reconnect-request` rule concerns `connection`.
    static func outboundDecoder(for rules: [FaultRule], connection: Int) -> RTMPChunkDecoder? {
        guard rules.contains(where: { rule in
            if case .reconnectRequest = rule.fault { rule.trigger.matches(connection: connection) } else { false }
        }) else { return nil }
        var decoder = RTMPChunkDecoder()
        // Only the boundaries count: a server sending more than this unfinished is not followed.
        decoder.maxBufferedPayloadBytes = 8 * 1024 * 1024
        decoder.maxChunkStreams = 64
        return decoder
    }

    /// Follows the server's bytes to the end of each of its messages (applying its Set Chunk Size).
    func followServerMessages(_ buffer: ByteBuffer) {
        let view = Self.pastHandshake(buffer, remaining: &outboundHandshakeRemaining)
        guard !view.isEmpty, var decoder = outboundDecoder else { return }
        decoder.append(view)
        do {
            while try decoder.nextMessage() != nil {}
            outboundDecoder = decoder
        } catch {
            // Not RTMP we can follow: no request is ever cut into it.
            outboundDecoder = nil
            pendingReconnectRequest = nil
        }
    }

    /// Sends the due request once the client has published and the server's last message is
    /// whole (nothing of it waits in a latency queue either).
    func sendReconnectRequestIfReady() {
        guard let rule = pendingReconnectRequest, clientPublished, !finished, !stalled, outbound.isEmpty,
              outboundHandshakeRemaining == 0, let decoder = outboundDecoder, decoder.bufferedByteCount == 0,
              let context, case .reconnectRequest(let tcUrl) = rule.fault else { return }
        pendingReconnectRequest = nil
        var info = [
            AMF0Property("level", .string("status")),
            AMF0Property("code", .string("NetConnection.Connect.ReconnectRequest")),
            AMF0Property("description", .string("The loopback asks the client to reconnect (fault \(rule))")),
        ]
        if let tcUrl { info.append(AMF0Property("tcUrl", .string(tcUrl))) }
        let body = AMF0.encode([.string("onStatus"), .number(0), .null, .object(info)])
        var encoder = RTMPChunkEncoder(chunkSize: decoder.chunkSize)
        let bytes = encoder.encode(RTMPMessage(type: .commandAMF0, chunkStreamID: Self.reconnectChunkStreamID, payload: body))
        core.emit(.faultInjected(rule, connection: connection))
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
    }
}
