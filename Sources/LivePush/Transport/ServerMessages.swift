import LivePushWire

/// The server's side of a published connection, read without ever waiting: bytes in, decisions
/// out. The driver (``RTMPSession/serviceIncoming()``) reads what the socket holds and carries
/// the decisions out.
///
/// librtmp reads a whole packet at a time, blocking until its last byte: a server that trickled
/// its messages held the shared send loop, and every output on it, for as long as it liked. This
/// decoder takes the bytes as they come and keeps a partial message until the rest arrives.
struct ServerMessages {
    enum Action: Equatable {
        /// The server acknowledged this many bytes (its sequence number).
        case acknowledged(UInt32)
        /// A message to send back: a ping response, or our own Acknowledgement.
        case send(RTMPMessage)
        /// The server ended the stream, or sent what cannot be read.
        case fail(LivePushError)
        /// The server asks the client to reconnect (Enhanced RTMP v2).
        case reconnectRequest(ServerReconnectRequest)
    }

    /// Most a server may leave unfinished (a publisher only gets small control and status messages).
    static let maxBufferedBytes = 1 << 20

    private var decoder: RTMPChunkDecoder
    private var bytesIn: UInt64
    private var bytesAcknowledged: UInt64
    /// The server's Window Acknowledgement Size: we acknowledge every so many bytes received.
    private var window: UInt64

    init(chunkSize: Int, window: UInt32, bytesIn: UInt64 = 0, bytesAcknowledged: UInt64 = 0) {
        decoder = RTMPChunkDecoder(chunkSize: max(1, chunkSize))
        decoder.maxMessageSize = Self.maxBufferedBytes
        decoder.maxBufferedPayloadBytes = Self.maxBufferedBytes
        decoder.maxChunkStreams = 64
        self.window = UInt64(window)
        self.bytesIn = bytesIn
        self.bytesAcknowledged = bytesAcknowledged
    }

    /// The last header read on a chunk stream before this reader took over.
    mutating func resume(chunkStreamID: UInt32, timestamp: UInt32, length: Int, typeID: UInt8, streamID: UInt32) {
        decoder.resume(chunkStreamID: chunkStreamID, timestamp: timestamp, length: length, typeID: typeID, streamID: streamID)
    }

    mutating func receive(_ bytes: some Collection<UInt8>) -> [Action] {
        bytesIn += UInt64(bytes.count)
        decoder.append(bytes)
        var actions: [Action] = []
        do {
            while let message = try decoder.nextMessage() {
                if let action = handle(message) { actions.append(action) }
            }
        } catch {
            return actions + [.fail(LivePushError(.connectionLost, "the server's messages cannot be read (\(error.message))"))]
        }
        if decoder.bufferedByteCount > Self.maxBufferedBytes {
            return actions + [.fail(LivePushError(.connectionLost, "the server sent more than \(Self.maxBufferedBytes) bytes it did not finish"))]
        }
        if window > 0 && bytesIn - bytesAcknowledged >= window {
            bytesAcknowledged = bytesIn
            actions.append(.send(.acknowledgement(sequenceNumber: UInt32(truncatingIfNeeded: bytesIn))))
        }
        return actions
    }

    private mutating func handle(_ message: RTMPMessage) -> Action? {
        switch message.type {
        case .acknowledgement:
            return message.payloadUInt32.map(Action.acknowledged)
        case .windowAcknowledgementSize:
            if let size = message.payloadUInt32 { window = UInt64(size) }
            return nil
        case .userControl:
            // A ping request (event 6) is answered with a ping response (7) carrying its timestamp.
            let p = message.payload
            guard p.count >= 6, p[0] == 0, p[1] == 6 else { return nil }
            return .send(.userControl(event: 7, data: Array(p[2..<6])))
        case .commandAMF0, .commandAMF3:
            guard let reply = ServerReply(message) else { return nil }
            if let request = reply.reconnectRequest { return .reconnectRequest(request) }
            return reply.error(connectAccepted: true).map(Action.fail)
        default:
            return nil
        }
    }
}
