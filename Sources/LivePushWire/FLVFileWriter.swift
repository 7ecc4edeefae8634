/// Builds FLV file bytes. Use the static functions to stream a file piece by piece
/// (`header` once, then `tag` per message), or an instance to accumulate a small file in memory.
public struct FLVFileWriter: Sendable {
    /// The file bytes written so far (header + tags).
    public private(set) var bytes: [UInt8]

    public init(hasAudio: Bool, hasVideo: Bool) {
        bytes = FLVFileWriter.header(hasAudio: hasAudio, hasVideo: hasVideo)
    }

    /// Appends one tag.
    public mutating func append(type: FLVTagType, timestampMs: UInt32, body: [UInt8]) {
        FLVFileWriter.appendTag(type: type, timestampMs: timestampMs, body: body, into: &bytes)
    }

    /// The 9-byte FLV header followed by PreviousTagSize0 (4 zero bytes): 13 bytes.
    public static func header(hasAudio: Bool, hasVideo: Bool) -> [UInt8] {
        let flags: UInt8 = (hasAudio ? 0x04 : 0) | (hasVideo ? 0x01 : 0)
        return [0x46, 0x4C, 0x56, 0x01, flags, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x00]
    }

    /// One tag: the 11-byte tag header (type, UI24 size, UI24 timestamp, UI8 extended timestamp,
    /// UI24 stream id 0), the body, and the 4-byte PreviousTagSize (11 + body size).
    public static func tag(type: FLVTagType, timestampMs: UInt32, body: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(15 + body.count)
        appendTag(type: type, timestampMs: timestampMs, body: body, into: &out)
        return out
    }

    /// The 11-byte tag header alone (for writers that write the body from another buffer).
    public static func tagHeader(type: FLVTagType, timestampMs: UInt32, bodySize: Int) -> [UInt8] {
        let size = UInt32(truncatingIfNeeded: bodySize) & 0xFF_FFFF
        return [
            type.rawValue,
            UInt8((size >> 16) & 0xFF), UInt8((size >> 8) & 0xFF), UInt8(size & 0xFF),
            UInt8((timestampMs >> 16) & 0xFF), UInt8((timestampMs >> 8) & 0xFF), UInt8(timestampMs & 0xFF),
            UInt8((timestampMs >> 24) & 0xFF),
            0, 0, 0,
        ]
    }

    /// The 4-byte PreviousTagSize that follows a tag with a body of `bodySize` bytes.
    public static func previousTagSize(bodySize: Int) -> [UInt8] {
        let total = UInt32(truncatingIfNeeded: 11 + bodySize)
        return [UInt8(total >> 24), UInt8((total >> 16) & 0xFF), UInt8((total >> 8) & 0xFF), UInt8(total & 0xFF)]
    }

    static func appendTag(type: FLVTagType, timestampMs: UInt32, body: [UInt8], into out: inout [UInt8]) {
        out.append(contentsOf: tagHeader(type: type, timestampMs: timestampMs, bodySize: body.count))
        out.append(contentsOf: body)
        out.append(contentsOf: previousTagSize(bodySize: body.count))
    }
}
