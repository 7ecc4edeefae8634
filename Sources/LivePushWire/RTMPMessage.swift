/// One complete RTMP message (after chunk reassembly, or before chunking).
public struct RTMPMessage: Sendable, Equatable {
    /// Raw message type id (see ``RTMPMessageType``).
    public var typeID: UInt8
    /// Message stream id (0 for control and NetConnection commands).
    public var streamID: UInt32
    /// Absolute timestamp in milliseconds (32-bit, wraps).
    public var timestamp: UInt32
    /// The chunk stream the message travels on (2 for protocol control).
    public var chunkStreamID: UInt32
    public var payload: [UInt8]

    public init(typeID: UInt8, streamID: UInt32 = 0, timestamp: UInt32 = 0, chunkStreamID: UInt32, payload: [UInt8]) {
        self.typeID = typeID
        self.streamID = streamID
        self.timestamp = timestamp
        self.chunkStreamID = chunkStreamID
        self.payload = payload
    }

    public init(type: RTMPMessageType, streamID: UInt32 = 0, timestamp: UInt32 = 0, chunkStreamID: UInt32, payload: [UInt8]) {
        self.init(typeID: type.rawValue, streamID: streamID, timestamp: timestamp, chunkStreamID: chunkStreamID, payload: payload)
    }

    /// The known message type, or nil for an unknown id.
    public var type: RTMPMessageType? { RTMPMessageType(rawValue: typeID) }

    /// Chunk stream id for protocol control messages and user control messages.
    public static let controlChunkStreamID: UInt32 = 2

    // MARK: Protocol control messages

    public static func setChunkSize(_ size: UInt32) -> RTMPMessage {
        RTMPMessage(type: .setChunkSize, chunkStreamID: controlChunkStreamID, payload: be32(size & 0x7FFF_FFFF))
    }

    public static func abort(chunkStreamID csid: UInt32) -> RTMPMessage {
        RTMPMessage(type: .abort, chunkStreamID: controlChunkStreamID, payload: be32(csid))
    }

    public static func acknowledgement(sequenceNumber: UInt32) -> RTMPMessage {
        RTMPMessage(type: .acknowledgement, chunkStreamID: controlChunkStreamID, payload: be32(sequenceNumber))
    }

    public static func windowAcknowledgementSize(_ size: UInt32) -> RTMPMessage {
        RTMPMessage(type: .windowAcknowledgementSize, chunkStreamID: controlChunkStreamID, payload: be32(size))
    }

    /// `limitType`: 0 hard, 1 soft, 2 dynamic.
    public static func setPeerBandwidth(_ size: UInt32, limitType: UInt8) -> RTMPMessage {
        RTMPMessage(type: .setPeerBandwidth, chunkStreamID: controlChunkStreamID, payload: be32(size) + [limitType])
    }

    /// User control message: 16-bit event type followed by event data.
    public static func userControl(event: UInt16, data: [UInt8]) -> RTMPMessage {
        RTMPMessage(type: .userControl, chunkStreamID: controlChunkStreamID, payload: [UInt8(event >> 8), UInt8(event & 0xFF)] + data)
    }

    /// User control StreamBegin (event 0).
    public static func streamBegin(streamID: UInt32) -> RTMPMessage {
        userControl(event: 0, data: be32(streamID))
    }

    /// User control StreamEOF (event 1).
    public static func streamEOF(streamID: UInt32) -> RTMPMessage {
        userControl(event: 1, data: be32(streamID))
    }

    /// An AMF0 command message (type 20).
    public static func command(_ values: [AMF0Value], streamID: UInt32 = 0, chunkStreamID: UInt32 = 3) -> RTMPMessage {
        RTMPMessage(type: .commandAMF0, streamID: streamID, chunkStreamID: chunkStreamID, payload: AMF0.encode(values))
    }

    /// The 32-bit big-endian value at the start of the payload (for control messages).
    public var payloadUInt32: UInt32? {
        guard payload.count >= 4 else { return nil }
        return UInt32(payload[0]) << 24 | UInt32(payload[1]) << 16 | UInt32(payload[2]) << 8 | UInt32(payload[3])
    }

    static func be32(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
    }
}
