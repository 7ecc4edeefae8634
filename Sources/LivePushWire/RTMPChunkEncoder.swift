/// Splits RTMP messages into chunks.
///
/// Uses the smallest header the previous message on the same chunk stream allows (fmt 1–3) when
/// ``compressesHeaders`` is true, fmt 0 otherwise. Timestamps ≥ 0xFFFFFF use the extended
/// timestamp, which is repeated on every fmt 3 chunk of the message.
/// When ``appliesProtocolControl`` is true (default), encoding a Set Chunk Size message
/// switches to the new chunk size for the following messages.
public struct RTMPChunkEncoder: Sendable {
    /// Maximum chunk payload size of outgoing chunks.
    public var chunkSize: Int = 128
    public var compressesHeaders = true
    public var appliesProtocolControl = true

    struct Last: Sendable {
        var timestamp: UInt32
        var timestampField: UInt32
        var length: Int
        var typeID: UInt8
        var streamID: UInt32
    }

    var last: [UInt32: Last] = [:]

    public init(chunkSize: Int = 128) {
        self.chunkSize = chunkSize
    }

    public mutating func encode(_ message: RTMPMessage) -> [UInt8] {
        var out: [UInt8] = []
        encode(message, into: &out)
        return out
    }

    public mutating func encode(_ message: RTMPMessage, into out: inout [UInt8]) {
        let csid = message.chunkStreamID
        let length = message.payload.count
        precondition(csid >= 2 && csid <= 65_599, "chunk stream id out of range")
        precondition(length <= 0xFF_FFFF, "RTMP message too large")

        var fmt: UInt8 = 0
        var field = message.timestamp
        if compressesHeaders, let prev = last[csid], prev.streamID == message.streamID, message.timestamp >= prev.timestamp {
            let delta = message.timestamp - prev.timestamp
            field = delta
            if prev.length != length || prev.typeID != message.typeID {
                fmt = 1
            } else if delta != prev.timestampField {
                fmt = 2
            } else {
                fmt = 3
            }
        }
        out.reserveCapacity(out.count + length + 18 + (length / max(chunkSize, 1)) * 8)
        RTMPChunkHeader.appendFirst(fmt: fmt, chunkStreamID: csid, timestampField: field, length: length,
                                    typeID: message.typeID, streamID: message.streamID, into: &out)

        var offset = 0
        let size = max(chunkSize, 1)
        repeat {
            if offset > 0 {
                RTMPChunkHeader.appendContinuation(chunkStreamID: csid, timestampField: field, into: &out)
            }
            let take = min(size, length - offset)
            out.append(contentsOf: message.payload[offset..<(offset + take)])
            offset += take
        } while offset < length

        last[csid] = Last(timestamp: message.timestamp, timestampField: field, length: length,
                          typeID: message.typeID, streamID: message.streamID)

        if appliesProtocolControl, message.type == .setChunkSize, let raw = message.payloadUInt32 {
            let newSize = Int(raw & 0x7FFF_FFFF)
            if newSize >= 1 { chunkSize = newSize }
        }
    }
}
