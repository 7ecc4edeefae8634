/// The header of a PES packet (ISO/IEC 13818-1 2.4.3.6), as LivePush writes it: MPEG-2 PES
/// syntax, data aligned (each PES starts with an access unit or an ADTS frame), a PTS, and a
/// DTS only when it differs from the PTS.
enum PESHeader {
    /// `stream_id` of the first video stream.
    static let videoStreamID: UInt8 = 0xE0
    /// `stream_id` of the first audio stream.
    static let audioStreamID: UInt8 = 0xC0

    /// The header bytes. `payloadLength` nil writes PES_packet_length 0, "unbounded", which
    /// only video may use (and does: an access unit may exceed the 16-bit length).
    static func bytes(streamID: UInt8, pts: UInt64, dts: UInt64?, payloadLength: Int?) -> [UInt8] {
        let writesDTS = dts != nil && dts != pts
        let headerDataLength = writesDTS ? 10 : 5
        var out: [UInt8] = [0x00, 0x00, 0x01, streamID]
        out.reserveCapacity(9 + headerDataLength)
        var packetLength = 0
        if let payloadLength {
            packetLength = 3 + headerDataLength + payloadLength
            precondition(packetLength <= 0xFFFF, "a bounded PES holds at most 65535 bytes")
        }
        out.append(UInt8(packetLength >> 8))
        out.append(UInt8(packetLength & 0xFF))
        out.append(0x84)  // '10', not scrambled, no priority, data_alignment_indicator, no copyright
        out.append(writesDTS ? 0xC0 : 0x80)  // PTS_DTS_flags
        out.append(UInt8(headerDataLength))
        appendTimestamp(pts, marker: writesDTS ? 0x3 : 0x2, to: &out)
        if writesDTS, let dts { appendTimestamp(dts, marker: 0x1, to: &out) }
        return out
    }

    /// A 33-bit timestamp in its 5-byte form: 4 marker bits ('0010' PTS alone, '0011' PTS
    /// followed by a DTS, '0001' that DTS), then the value in 3, 15 and 15 bits, each followed
    /// by a marker bit 1.
    static func appendTimestamp(_ ticks: UInt64, marker: UInt8, to out: inout [UInt8]) {
        let t = ticks & TSClock.mask33
        out.append(marker << 4 | UInt8((t >> 29) & 0x0E) | 1)
        out.append(UInt8((t >> 22) & 0xFF))
        out.append(UInt8((t >> 14) & 0xFE) | 1)
        out.append(UInt8((t >> 7) & 0xFF))
        out.append(UInt8((t << 1) & 0xFE) | 1)
    }
}
