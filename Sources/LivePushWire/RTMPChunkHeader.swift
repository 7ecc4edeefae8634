/// The byte layout of an RTMP chunk header, shared by ``RTMPChunkEncoder`` (every message kind, the
/// loopback and the receiver) and ``RTMPMediaChunker`` (a publisher's media, fmt 0/1 only).
enum RTMPChunkHeader {
    /// The basic header: fmt and chunk stream id, in one to three bytes.
    static func appendBasic(fmt: UInt8, chunkStreamID csid: UInt32, into out: inout [UInt8]) {
        if csid < 64 {
            out.append(fmt << 6 | UInt8(csid))
        } else if csid < 320 {
            out.append(fmt << 6)
            out.append(UInt8(csid - 64))
        } else {
            out.append(fmt << 6 | 1)
            let v = csid - 64
            out.append(UInt8(v & 0xFF))
            out.append(UInt8(v >> 8))
        }
    }

    /// The first chunk's header of a message: the basic header, then as much of the message header
    /// as `fmt` carries, then the extended timestamp when `timestampField` does not fit 24 bits.
    static func appendFirst(fmt: UInt8, chunkStreamID csid: UInt32, timestampField field: UInt32, length: Int,
                            typeID: UInt8, streamID: UInt32, into out: inout [UInt8]) {
        appendBasic(fmt: fmt, chunkStreamID: csid, into: &out)
        if fmt <= 2 { append24(min(field, 0xFF_FFFF), into: &out) }
        if fmt <= 1 {
            append24(UInt32(length), into: &out)
            out.append(typeID)
        }
        if fmt == 0 {
            // The message stream id is the one little-endian field of the header.
            for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: streamID >> UInt32(shift))) }
        }
        if field >= 0xFF_FFFF { append32(field, into: &out) }
    }

    /// A continuation chunk's header (fmt 3). It repeats an extended timestamp, as FFmpeg and
    /// nginx-rtmp expect.
    static func appendContinuation(chunkStreamID csid: UInt32, timestampField field: UInt32, into out: inout [UInt8]) {
        appendBasic(fmt: 3, chunkStreamID: csid, into: &out)
        if field >= 0xFF_FFFF { append32(field, into: &out) }
    }

    @inline(__always) static func append24(_ v: UInt32, into out: inout [UInt8]) {
        out.append(UInt8((v >> 16) & 0xFF)); out.append(UInt8((v >> 8) & 0xFF)); out.append(UInt8(v & 0xFF))
    }

    @inline(__always) static func append32(_ v: UInt32, into out: inout [UInt8]) {
        out.append(UInt8(v >> 24))
        append24(v, into: &out)
    }
}
