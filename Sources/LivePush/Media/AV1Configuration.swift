/// AV1 for Enhanced RTMP: an encoder's temporal units made into what an `av01` stream carries
/// (OBUs as in MP4, without temporal delimiters) and the AV1CodecConfigurationRecord (av1C,
/// the AV1-ISOBMFF binding) built from the sequence header OBU.
enum AV1Configuration {
    static let sequenceHeader: UInt8 = 1, temporalDelimiter: UInt8 = 2, padding: UInt8 = 15

    /// Each OBU in `bytes` (all with their size field, as encoders write them for a stream):
    /// its type and its byte range, header included; stops at the first malformed one.
    static func forEachOBU(in bytes: UnsafeBufferPointer<UInt8>, _ body: (UInt8, Range<Int>, _ payload: Range<Int>) -> Void) {
        var i = 0
        while i < bytes.count {
            let header = bytes[i]
            let type = (header >> 3) & 0x0F
            let hasExtension = header & 0x04 != 0
            var p = i + 1 + (hasExtension ? 1 : 0)
            guard header & 0x02 != 0 else {
                body(type, i..<bytes.count, min(p, bytes.count)..<bytes.count)  // no size field: the rest
                return
            }
            var size = 0
            var shift = 0
            while p < bytes.count {
                let byte = bytes[p]
                size |= Int(byte & 0x7F) << shift
                p += 1
                shift += 7
                if byte & 0x80 == 0 || shift >= 56 { break }
            }
            guard p + size <= bytes.count else { return }
            body(type, i..<(p + size), p..<(p + size))
            i = p + size
        }
    }

    /// A temporal unit without its temporal delimiter and padding OBUs.
    static func samples(from bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        forEachOBU(in: bytes) { type, range, _ in
            if type != temporalDelimiter && type != padding { out += bytes[range] }
        }
        return out
    }

    /// The av1C for the sequence header OBU in `bytes` (an encoder's global header); nil
    /// without one. seq_profile and the first operating point's level come from the header
    /// when it has no timing info (else level 8, 4.0); chroma and depth are LivePush's
    /// encodes' (4:2:0, 8 bits). Decoders take the sequence header itself from configOBUs.
    static func record(fromOBUs bytes: [UInt8]) -> [UInt8]? {
        var found: (obu: [UInt8], payload: [UInt8])?
        bytes.withUnsafeBufferPointer { buffer in
            forEachOBU(in: buffer) { type, range, payload in
                if type == sequenceHeader && found == nil { found = (Array(buffer[range]), Array(buffer[payload])) }
            }
        }
        guard let (obu, payload) = found, let first = payload.first else { return nil }
        let profile = first >> 5
        let reducedStillPicture = first & 0x08 != 0
        var level: UInt8 = 8
        if reducedStillPicture {
            level = (first & 0x07) << 2 | (payload.count > 1 ? payload[1] >> 6 : 0)
        } else if first & 0x04 == 0, payload.count > 3 {
            // timing_info_present_flag 0, initial_display_delay_present_flag, 5 bits of
            // operating_points_cnt_minus_1, 12 bits of operating_point_idc[0], then seq_level_idx[0].
            var bits = BitCursor(payload, bit: 6)
            _ = bits.read(1 + 5 + 12)
            level = UInt8(bits.read(5))
        }
        return [0x81, profile << 5 | (level & 0x1F), 0x0C, 0x00] + obu
    }

    private struct BitCursor {
        let bytes: [UInt8]
        var bit: Int
        init(_ bytes: [UInt8], bit: Int) {
            self.bytes = bytes
            self.bit = bit
        }
        mutating func read(_ count: Int) -> Int {
            var value = 0
            for _ in 0..<count {
                let byte = bit / 8 < bytes.count ? bytes[bit / 8] : 0
                value = value << 1 | Int((byte >> (7 - UInt8(bit % 8))) & 1)
                bit += 1
            }
            return value
        }
    }
}
