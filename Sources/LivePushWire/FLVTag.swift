/// One tag of an FLV file: type, timestamp and body (the body is the same bytes as an RTMP
/// audio/video/data message payload).
public struct FLVTag: Sendable, Equatable {
    public var type: FLVTagType
    public var timestampMs: UInt32
    public var body: [UInt8]

    public init(type: FLVTagType, timestampMs: UInt32, body: [UInt8]) {
        self.type = type
        self.timestampMs = timestampMs
        self.body = body
    }

    /// For video tags: frame type 1 (keyframe) in the first body byte.
    public var isKeyframe: Bool {
        type == .video && (body.first ?? 0) >> 4 == 1
    }

    /// For AVC video (codec 7) and AAC audio (format 10): packet type 0 (sequence header).
    public var isSequenceHeader: Bool {
        guard body.count >= 2 else { return false }
        switch type {
        case .video: return body[0] & 0x0F == 7 && body[1] == 0
        case .audio: return body[0] >> 4 == 10 && body[1] == 0
        case .script: return false
        }
    }

    /// For AVC video: the signed 24-bit composition time offset in milliseconds.
    public var compositionTimeMs: Int32? {
        guard type == .video, body.count >= 5, body[0] & 0x0F == 7 else { return nil }
        let raw = Int32(body[2]) << 16 | Int32(body[3]) << 8 | Int32(body[4])
        return (raw << 8) >> 8  // sign-extend 24 bits
    }
}
