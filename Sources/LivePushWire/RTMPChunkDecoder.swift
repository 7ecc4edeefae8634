/// Incremental decoder of an RTMP chunk stream (after the handshake) into messages.
///
/// Feed bytes with ``append(_:)`` and pull messages with ``nextMessage()`` until it returns nil.
/// Handles basic headers of 1–3 bytes, message headers of fmt 0–3, extended timestamps
/// (including on fmt 3 chunks, detected by comparing with the stored value as not every
/// client repeats it), interleaved chunk streams and message reassembly.
/// When ``appliesProtocolControl`` is true (default), Set Chunk Size (1) and Abort (2)
/// messages are applied as soon as they are decoded; they are still returned.
public struct RTMPChunkDecoder: Sendable {
    /// Maximum chunk payload size of incoming chunks (Set Chunk Size from the peer).
    public var chunkSize: Int = 128
    /// Largest message accepted (the 24-bit length field allows up to 16 MiB − 1).
    public var maxMessageSize: Int = 0xFF_FFFF
    public var appliesProtocolControl = true
    /// Largest sum of the partial messages held across all chunk streams, and most chunk streams
    /// held at once. A peer chooses how many chunk streams it interleaves (up to 65,599) and how
    /// long each message is, so without these a connection could hold gigabytes unfinished.
    public var maxBufferedPayloadBytes: Int = .max
    public var maxChunkStreams: Int = .max
    /// Bytes of partial messages held across all chunk streams.
    public private(set) var bufferedPayloadBytes = 0

    struct ChunkStreamState: Sendable {
        var timestamp: UInt32 = 0          // absolute timestamp of the current / last message
        var timestampField: UInt32 = 0     // last timestamp or delta field (extended value when extended)
        var extended = false               // last header used an extended timestamp
        var length = 0
        var typeID: UInt8 = 0
        var streamID: UInt32 = 0
        var payload: [UInt8] = []
        var received = 0                   // bytes of the current message received so far
        var hasHeader = false
    }

    var streams: [UInt32: ChunkStreamState] = [:]
    var buffer: [UInt8] = []
    var readIndex = 0

    public init(chunkSize: Int = 128) {
        self.chunkSize = chunkSize
    }

    /// Bytes appended but not yet consumed.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if readIndex > 0 && (readIndex >= 65_536 || readIndex == buffer.count) {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Takes up a chunk stream where another reader left it: the header of the last message it
    /// read there (which later fmt 1–3 chunks build on). A publisher that hands the reading of the
    /// server's messages from librtmp to this decoder mid-connection needs it.
    public mutating func resume(chunkStreamID: UInt32, timestamp: UInt32, length: Int, typeID: UInt8, streamID: UInt32) {
        var state = ChunkStreamState()
        state.timestamp = timestamp
        state.length = length
        state.typeID = typeID
        state.streamID = streamID
        state.hasHeader = true
        streams[chunkStreamID] = state
    }

    /// Discards the partially received message on a chunk stream (Abort message).
    public mutating func abort(chunkStreamID: UInt32) {
        if var state = streams[chunkStreamID] {
            bufferedPayloadBytes -= state.payload.count
            state.payload = []
            state.received = 0
            streams[chunkStreamID] = state
        }
    }

    /// The next complete message, or nil when more bytes are needed.
    public mutating func nextMessage() throws(RTMPChunkError) -> RTMPMessage? {
        while true {
            guard let (message, consumed) = try parseChunk(at: readIndex) else { return nil }
            readIndex += consumed
            if let message {
                if appliesProtocolControl { try applyControl(message) }
                return message
            }
        }
    }

    mutating func applyControl(_ message: RTMPMessage) throws(RTMPChunkError) {
        switch message.type {
        case .setChunkSize:
            guard let raw = message.payloadUInt32 else { throw RTMPChunkError("short Set Chunk Size") }
            let size = Int(raw & 0x7FFF_FFFF)
            guard size >= 1 && size <= 0xFF_FFFF else { throw RTMPChunkError("invalid chunk size \(size)") }
            chunkSize = size
        case .abort:
            guard let csid = message.payloadUInt32 else { throw RTMPChunkError("short Abort") }
            abort(chunkStreamID: csid)
        default:
            break
        }
    }

    @inline(__always) func be24(_ i: Int) -> UInt32 {
        UInt32(buffer[i]) << 16 | UInt32(buffer[i + 1]) << 8 | UInt32(buffer[i + 2])
    }

    @inline(__always) func be32(_ i: Int) -> UInt32 {
        UInt32(buffer[i]) << 24 | UInt32(buffer[i + 1]) << 16 | UInt32(buffer[i + 2]) << 8 | UInt32(buffer[i + 3])
    }

    /// Parses one chunk at `start`. Returns nil if incomplete; otherwise the completed message
    /// (if this chunk completed one) and the number of bytes consumed. State changes only on success.
    mutating func parseChunk(at start: Int) throws(RTMPChunkError) -> (RTMPMessage?, Int)? {
        let end = buffer.count
        var p = start
        guard p < end else { return nil }
        let b0 = buffer[p]
        let fmt = b0 >> 6
        var csid = UInt32(b0 & 0x3F)
        p += 1
        if csid == 0 {
            guard end - p >= 1 else { return nil }
            csid = 64 + UInt32(buffer[p])
            p += 1
        } else if csid == 1 {
            guard end - p >= 2 else { return nil }
            csid = 64 + UInt32(buffer[p]) + UInt32(buffer[p + 1]) * 256
            p += 2
        }

        if streams[csid] == nil && streams.count >= maxChunkStreams {
            throw RTMPChunkError("more than \(maxChunkStreams) chunk streams", isLimit: true)
        }
        var state = streams[csid] ?? ChunkStreamState()
        let startsMessage = state.received == 0
        // Partial bytes this chunk drops (a new header mid-message) or completes; counted once
        // the chunk is whole, as every state change here is.
        var released = 0
        if fmt != 0 && !state.hasHeader {
            throw RTMPChunkError("fmt \(fmt) chunk on chunk stream \(csid) without a previous header")
        }
        if fmt != 3 && !startsMessage {
            // A new header in the middle of a message: the peer abandoned the message.
            released += state.payload.count
            state.payload = []
            state.received = 0
        }

        switch fmt {
        case 0, 1, 2:
            let headerSize = fmt == 0 ? 11 : (fmt == 1 ? 7 : 3)
            guard end - p >= headerSize else { return nil }
            var field = be24(p)
            if fmt <= 1 {
                state.length = Int(be24(p + 3))
                state.typeID = buffer[p + 6]
            }
            if fmt == 0 {
                state.streamID = UInt32(buffer[p + 7]) | UInt32(buffer[p + 8]) << 8
                    | UInt32(buffer[p + 9]) << 16 | UInt32(buffer[p + 10]) << 24
            }
            p += headerSize
            state.extended = field == 0xFF_FFFF
            if state.extended {
                guard end - p >= 4 else { return nil }
                field = be32(p)
                p += 4
            }
            state.timestampField = field
            state.timestamp = fmt == 0 ? field : state.timestamp &+ field
            state.hasHeader = true
        default:  // fmt 3
            if state.extended {
                // Extended timestamp repeated on fmt 3 chunks by most (not all) clients.
                guard end - p >= 4 else { return nil }
                if be32(p) == state.timestampField { p += 4 }
            }
            if startsMessage {
                state.timestamp = state.timestamp &+ state.timestampField
            }
        }

        if state.length > maxMessageSize {
            throw RTMPChunkError("message of \(state.length) bytes exceeds the limit of \(maxMessageSize)")
        }
        if state.received == 0 {
            // No reserveCapacity(state.length): the length is the peer's word, and 12 header bytes
            // would buy a 16 MiB buffer (again on every poll until the chunk is complete). The
            // payload grows with the bytes that actually arrive.
            state.payload = []
        }
        let take = min(chunkSize, state.length - state.received)
        guard end - p >= take else { return nil }
        if bufferedPayloadBytes - released + take > maxBufferedPayloadBytes {
            throw RTMPChunkError("partial messages would hold more than \(maxBufferedPayloadBytes) bytes", isLimit: true)
        }
        streams[csid] = nil  // keep `state.payload` uniquely referenced so appends do not copy
        state.payload.append(contentsOf: buffer[p..<(p + take)])
        state.received += take
        p += take

        bufferedPayloadBytes += take - released
        var message: RTMPMessage?
        if state.received >= state.length {
            bufferedPayloadBytes -= state.payload.count
            message = RTMPMessage(
                typeID: state.typeID, streamID: state.streamID, timestamp: state.timestamp,
                chunkStreamID: csid, payload: state.payload)
            state.payload = []
            state.received = 0
        }
        streams[csid] = state
        return (message, p - start)
    }
}
