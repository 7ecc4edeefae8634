/// Helpers for H.264 in AVCC form (length-prefixed NAL units, as stored in MP4/MOV/MKV/FLV).
package enum AVCCFormat {
    /// The parts of an AVCDecoderConfigurationRecord this layer needs.
    package struct DecoderConfiguration: Sendable, Equatable {
        /// Bytes per NAL length prefix (1, 2 or 4).
        package var lengthSize: Int
        /// The sequence parameter sets.
        package var sps: [[UInt8]]
        /// The picture parameter sets.
        package var pps: [[UInt8]]
    }

    /// Parses an AVCDecoderConfigurationRecord; nil when it is not one.
    package static func parseDecoderConfiguration(_ record: [UInt8]) -> DecoderConfiguration? {
        guard record.count >= 7, record[0] == 1 else { return nil }
        let lengthSize = Int(record[4] & 0x03) + 1
        guard lengthSize != 3 else { return nil }
        var pos = 5
        func readList(count: Int) -> [[UInt8]]? {
            var list: [[UInt8]] = []
            for _ in 0..<count {
                guard pos + 2 <= record.count else { return nil }
                let len = Int(record[pos]) << 8 | Int(record[pos + 1])
                pos += 2
                guard pos + len <= record.count else { return nil }
                list.append(Array(record[pos..<pos + len]))
                pos += len
            }
            return list
        }
        let spsCount = Int(record[pos] & 0x1F)
        pos += 1
        guard let sps = readList(count: spsCount), pos < record.count else { return nil }
        let ppsCount = Int(record[pos])
        pos += 1
        guard let pps = readList(count: ppsCount) else { return nil }
        return DecoderConfiguration(lengthSize: lengthSize, sps: sps, pps: pps)
    }

    /// Calls `body` with the range of each NAL unit of a length-prefixed buffer. Stops at the
    /// first length that runs past the end. Returns false when the buffer was malformed.
    @discardableResult
    package static func forEachNALUnit(
        in bytes: UnsafeBufferPointer<UInt8>, lengthSize: Int, _ body: (Range<Int>) -> Void
    ) -> Bool {
        var pos = 0
        let n = bytes.count
        while pos + lengthSize <= n {
            var len = 0
            for k in 0..<lengthSize { len = len << 8 | Int(bytes[pos + k]) }
            pos += lengthSize
            guard len <= n - pos else { return false }
            if len > 0 { body(pos..<pos + len) }
            pos += len
        }
        return pos == n
    }

    /// Whether an AVCC access unit is referenced by other frames: true when any slice NAL
    /// unit has nal_ref_idc != 0 (or, when it has no slice, any NAL unit has). Nil when the
    /// buffer is not well-formed length-prefixed data.
    package static func summarize(_ bytes: UnsafeBufferPointer<UInt8>, lengthSize: Int) -> AnnexBConverter.FrameSummary? {
        var anyRef = false, sliceRef = false, sawSlice = false, idr = false
        let ok = forEachNALUnit(in: bytes, lengthSize: lengthSize) { r in
            let header = bytes[r.lowerBound]
            let type = header & 0x1F
            let refIdc = (header >> 5) & 3
            if refIdc != 0 { anyRef = true }
            if type >= 1 && type <= 5 {
                sawSlice = true
                if refIdc != 0 { sliceRef = true }
                if type == AnnexBConverter.NALType.idrSlice { idr = true }
            }
        }
        guard ok else { return nil }
        return .init(isReference: sawSlice ? sliceRef : anyRef, hasIDR: idr)
    }

    /// Rewrites a length-prefixed buffer with `lengthSize`-byte prefixes to 4-byte prefixes.
    package static func toFourByteLengths(_ bytes: UnsafeBufferPointer<UInt8>, lengthSize: Int) -> [UInt8] {
        var total = 0
        forEachNALUnit(in: bytes, lengthSize: lengthSize) { total += 4 + $0.count }
        return [UInt8](unsafeUninitializedCapacity: total) { out, count in
            guard let dst = out.baseAddress, let src = bytes.baseAddress else { count = 0; return }
            var o = 0
            forEachNALUnit(in: bytes, lengthSize: lengthSize) { r in
                let len = UInt32(r.count)
                dst[o] = UInt8(len >> 24); dst[o + 1] = UInt8((len >> 16) & 0xFF)
                dst[o + 2] = UInt8((len >> 8) & 0xFF); dst[o + 3] = UInt8(len & 0xFF)
                (dst + o + 4).initialize(from: src + r.lowerBound, count: r.count)
                o += 4 + r.count
            }
            count = o
        }
    }

    /// The record rewritten to announce 4-byte NAL lengths (what the converted packets use).
    package static func withFourByteLengths(_ record: [UInt8]) -> [UInt8] {
        guard record.count >= 5 else { return record }
        var copy = record
        copy[4] = 0xFC | 0x03
        return copy
    }
}
