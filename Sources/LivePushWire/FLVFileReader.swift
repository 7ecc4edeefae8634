/// An error reading an FLV file.
public struct FLVFormatError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var offset: Int

    public init(_ message: String, offset: Int) {
        self.message = message
        self.offset = offset
    }

    public var description: String { "FLV: \(message) at offset \(offset)" }
}

/// Parses FLV files held in memory (for tests and summaries).
public enum FLVFileReader {
    /// The header flags of an FLV file.
    public static func header(in bytes: [UInt8]) throws(FLVFormatError) -> (hasAudio: Bool, hasVideo: Bool, dataOffset: Int) {
        guard bytes.count >= 9 else { throw FLVFormatError("file shorter than the FLV header", offset: 0) }
        guard bytes[0] == 0x46, bytes[1] == 0x4C, bytes[2] == 0x56 else {
            throw FLVFormatError("missing FLV signature", offset: 0)
        }
        let dataOffset = Int(bytes[5]) << 24 | Int(bytes[6]) << 16 | Int(bytes[7]) << 8 | Int(bytes[8])
        guard dataOffset >= 9 else { throw FLVFormatError("bad header size \(dataOffset)", offset: 5) }
        return (bytes[4] & 0x04 != 0, bytes[4] & 0x01 != 0, dataOffset)
    }

    /// All tags of the file. Tags of types other than audio/video/script are skipped.
    /// A truncated final tag is an error unless `allowTruncatedTail` is true (a file that is still
    /// being written).
    public static func tags(in bytes: [UInt8], allowTruncatedTail: Bool = false) throws(FLVFormatError) -> [FLVTag] {
        let dataOffset = try header(in: bytes).dataOffset
        var pos = dataOffset + 4  // skip PreviousTagSize0
        guard pos <= bytes.count else { throw FLVFormatError("truncated after header", offset: dataOffset) }
        var tags: [FLVTag] = []
        while pos < bytes.count {
            guard bytes.count - pos >= 11 else {
                if allowTruncatedTail { break }
                throw FLVFormatError("truncated tag header", offset: pos)
            }
            let rawType = bytes[pos] & 0x1F  // upper bits: reserved / filter
            let size = Int(bytes[pos + 1]) << 16 | Int(bytes[pos + 2]) << 8 | Int(bytes[pos + 3])
            let ts = UInt32(bytes[pos + 4]) << 16 | UInt32(bytes[pos + 5]) << 8 | UInt32(bytes[pos + 6])
                | UInt32(bytes[pos + 7]) << 24
            let bodyStart = pos + 11
            guard bytes.count - bodyStart >= size + 4 else {
                if allowTruncatedTail { break }
                throw FLVFormatError("truncated tag body (size \(size))", offset: pos)
            }
            let prev = Int(bytes[bodyStart + size]) << 24 | Int(bytes[bodyStart + size + 1]) << 16
                | Int(bytes[bodyStart + size + 2]) << 8 | Int(bytes[bodyStart + size + 3])
            guard prev == size + 11 else {
                throw FLVFormatError("PreviousTagSize \(prev) does not match tag size \(size + 11)", offset: bodyStart + size)
            }
            if let type = FLVTagType(rawValue: rawType) {
                tags.append(FLVTag(type: type, timestampMs: ts, body: Array(bytes[bodyStart..<(bodyStart + size)])))
            }
            pos = bodyStart + size + 4
        }
        return tags
    }
}
