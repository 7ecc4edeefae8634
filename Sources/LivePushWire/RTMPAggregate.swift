/// Aggregate messages (type 22): a run of FLV-tag-shaped sub-messages (11-byte header, body,
/// 4-byte back pointer). The first sub-message takes the aggregate's timestamp; the others keep
/// their offset from the first.
public enum RTMPAggregate {
    /// Splits an aggregate message into its sub-messages (on the aggregate's chunk and message stream).
    public static func split(_ message: RTMPMessage) throws(RTMPChunkError) -> [RTMPMessage] {
        let p = message.payload
        var pos = 0
        var out: [RTMPMessage] = []
        var firstTimestamp: UInt32?
        while pos < p.count {
            guard p.count - pos >= 11 else { throw RTMPChunkError("truncated aggregate sub-message header") }
            let type = p[pos]
            let size = Int(p[pos + 1]) << 16 | Int(p[pos + 2]) << 8 | Int(p[pos + 3])
            let ts = UInt32(p[pos + 4]) << 16 | UInt32(p[pos + 5]) << 8 | UInt32(p[pos + 6]) | UInt32(p[pos + 7]) << 24
            let bodyStart = pos + 11
            guard p.count - bodyStart >= size else { throw RTMPChunkError("truncated aggregate sub-message body") }
            let first = firstTimestamp ?? ts
            firstTimestamp = first
            out.append(RTMPMessage(
                typeID: type, streamID: message.streamID, timestamp: message.timestamp &+ (ts &- first),
                chunkStreamID: message.chunkStreamID, payload: Array(p[bodyStart..<(bodyStart + size)])))
            pos = min(p.count, bodyStart + size + 4)  // back pointer may be missing after the last one
        }
        return out
    }

    /// Builds an aggregate message from sub-messages (their timestamps are kept as sub-timestamps).
    public static func make(_ messages: [RTMPMessage], streamID: UInt32, chunkStreamID: UInt32) -> RTMPMessage {
        var payload: [UInt8] = []
        for m in messages {
            guard let type = FLVTagType(rawValue: m.typeID) else { continue }
            payload += FLVFileWriter.tag(type: type, timestampMs: m.timestamp, body: m.payload)
        }
        return RTMPMessage(type: .aggregate, streamID: streamID, timestamp: messages.first?.timestamp ?? 0,
                           chunkStreamID: chunkStreamID, payload: payload)
    }
}
