/// Chunks a publisher's media messages (FLV tag bodies) into bytes that one write sends.
///
/// librtmp writes every message with a system call of its own; a `--fast` push of an hour's
/// media is then hundreds of thousands of small writes. The publisher chunks its audio, video
/// and data messages here instead, into a buffer it writes once per send turn, and leaves
/// librtmp the handshake, the commands and the control messages (other chunk streams).
///
/// Headers: fmt 0 for the first message on a chunk stream, and whenever the timestamp goes
/// back or its delta does not fit 24 bits; fmt 1 (timestamp delta, length, type) otherwise.
/// Continuation chunks are fmt 3 and repeat an extended timestamp, as FFmpeg and nginx-rtmp
/// expect. Chunk stream ids below 64 only (one-byte basic header).
public struct RTMPMediaChunker: Sendable {
    public var chunkSize: Int
    /// The last timestamp written on each chunk stream (index = chunk stream id).
    private var lastTimestamp = [UInt32?](repeating: nil, count: 64)

    public init(chunkSize: Int) {
        self.chunkSize = chunkSize
    }

    /// The most bytes ``append(chunkStreamID:typeID:timestamp:streamID:prefix:payload:into:)`` adds for a message of
    /// `bodySize` bytes.
    public func maximumBytes(bodySize: Int) -> Int {
        let size = max(1, chunkSize)
        let chunks = max(1, (bodySize + size - 1) / size)
        return 16 + bodySize + (chunks - 1) * 5
    }

    /// Appends one message, `prefix` then `payload` as its body, to `out`.
    public mutating func append(chunkStreamID: Int, typeID: UInt8, timestamp: UInt32, streamID: UInt32,
                                prefix: FLVTagPrefix, payload: [UInt8], into out: inout [UInt8]) {
        precondition((2..<64).contains(chunkStreamID), "media chunk stream ids are 2...63")
        let length = prefix.count + payload.count
        precondition(length <= 0xFF_FFFF, "RTMP message too large")
        let csid = UInt32(chunkStreamID)

        var field = timestamp
        var fmt: UInt8 = 0
        if let last = lastTimestamp[chunkStreamID], timestamp >= last, timestamp - last < 0xFF_FFFF {
            fmt = 1
            field = timestamp - last
        }
        lastTimestamp[chunkStreamID] = timestamp
        RTMPChunkHeader.appendFirst(fmt: fmt, chunkStreamID: csid, timestampField: field, length: length,
                                    typeID: typeID, streamID: streamID, into: &out)

        // The body, cut every `chunkSize` bytes by a fmt 3 header.
        var room = max(1, chunkSize)
        prefix.withUnsafeBytes { bytes in
            out.append(contentsOf: bytes)
            room -= bytes.count
        }
        var offset = 0
        while offset < payload.count {
            if room == 0 {
                RTMPChunkHeader.appendContinuation(chunkStreamID: csid, timestampField: field, into: &out)
                room = max(1, chunkSize)
            }
            let take = min(room, payload.count - offset)
            out.append(contentsOf: payload[offset..<(offset + take)])
            offset += take
            room -= take
        }
    }
}
