#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Converts H.264 from Annex B byte-stream form (NAL units separated by `00 00 01` or
/// `00 00 00 01` start codes, as in MPEG-TS and encoder output) to the AVCC form the FLV
/// container needs (each NAL unit preceded by its 4-byte big-endian length), and builds an
/// AVCDecoderConfigurationRecord from SPS/PPS NAL units.
///
/// Pure Swift, no allocation besides the arrays it returns.
package enum AnnexBConverter {
    /// NAL unit types used here (ITU-T H.264 table 7-1).
    package enum NALType {
        /// NAL unit type 1.
        package static let nonIDRSlice: UInt8 = 1
        /// NAL unit type 5.
        package static let idrSlice: UInt8 = 5
        /// NAL unit type 6.
        package static let sei: UInt8 = 6
        /// NAL unit type 7.
        package static let sps: UInt8 = 7
        /// NAL unit type 8.
        package static let pps: UInt8 = 8
        /// NAL unit type 9.
        package static let accessUnitDelimiter: UInt8 = 9
    }

    /// What converting one access unit found out about it.
    package struct FrameSummary: Sendable, Equatable {
        /// Some VCL NAL unit (slice) has nal_ref_idc != 0 (or, without slices, any NAL unit has).
        package var isReference: Bool
        /// The access unit contains an IDR slice.
        package var hasIDR: Bool
    }

    /// True when the bytes begin with a 3- or 4-byte start code.
    package static func startsWithStartCode(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        if bytes.count >= 3, bytes[0] == 0, bytes[1] == 0, bytes[2] == 1 { return true }
        if bytes.count >= 4, bytes[0] == 0, bytes[1] == 0, bytes[2] == 0, bytes[3] == 1 { return true }
        return false
    }

    /// True when `bytes` begin with a 3- or 4-byte start code.
    package static func startsWithStartCode(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { startsWithStartCode($0) }
    }

    /// Calls `body` with the range of each NAL unit (start codes and trailing zero bytes
    /// excluded) in order. Bytes before the first start code are ignored.
    package static func forEachNALUnit(in bytes: UnsafeBufferPointer<UInt8>, _ body: (Range<Int>) -> Void) {
        guard let base = bytes.baseAddress else { return }
        let n = bytes.count
        var nalStart = -1
        var i = 2
        // Every start code ends in 0x01: let memchr (vectorized) find the candidates.
        while i < n, let hit = memchr(base + i, 1, n - i) {
            let j = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            if bytes[j - 1] == 0 && bytes[j - 2] == 0 {
                if nalStart >= 0 { emit(bytes, nalStart, j - 2, body) }
                nalStart = j + 1
                i = j + 3
            } else {
                i = j + 1
            }
        }
        if nalStart >= 0 { emit(bytes, nalStart, n, body) }
    }

    private static func emit(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int, _ body: (Range<Int>) -> Void) {
        var e = end
        while e > start, bytes[e - 1] == 0 { e -= 1 }  // trailing_zero_8bits / next 4-byte start code
        if e > start { body(start..<e) }
    }

    /// The NAL units (without start codes) of an Annex B buffer.
    package static func nalUnits(in bytes: [UInt8]) -> [[UInt8]] {
        bytes.withUnsafeBufferPointer { buf in
            var units: [[UInt8]] = []
            forEachNALUnit(in: buf) { units.append(Array(buf[$0])) }
            return units
        }
    }

    /// Converts one Annex B access unit to AVCC with 4-byte lengths. Access unit delimiters
    /// are dropped; SPS/PPS are dropped too when `dropParameterSets` is set (they travel in
    /// the decoder configuration record instead).
    package static func avcc(
        fromAnnexB bytes: UnsafeBufferPointer<UInt8>, dropParameterSets: Bool = false
    ) -> (data: [UInt8], summary: FrameSummary) {
        func keep(_ type: UInt8) -> Bool {
            if type == NALType.accessUnitDelimiter { return false }
            if dropParameterSets, type == NALType.sps || type == NALType.pps { return false }
            return true
        }
        // One scan collects the ranges (up to 64 on the stack; more is rare and rescanned),
        // then the output is written once with memcpy.
        let maxRanges = 64
        return withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: maxRanges) { ranges in
            var count = 0, total = 0
            var anyRef = false, sliceRef = false, sawSlice = false, idr = false
            forEachNALUnit(in: bytes) { r in
                let header = bytes[r.lowerBound]
                let type = header & 0x1F
                let refIdc = (header >> 5) & 3
                if refIdc != 0 { anyRef = true }
                if type >= 1 && type <= 5 {
                    sawSlice = true
                    if refIdc != 0 { sliceRef = true }
                    if type == NALType.idrSlice { idr = true }
                }
                guard keep(type) else { return }
                total += 4 + r.count
                if count < maxRanges { ranges.initializeElement(at: count, to: r) }
                count += 1
            }
            let data = [UInt8](unsafeUninitializedCapacity: total) { out, written in
                guard let dst = out.baseAddress, let src = bytes.baseAddress else { written = 0; return }
                var o = 0
                func write(_ r: Range<Int>) {
                    let len = UInt32(r.count)
                    dst[o] = UInt8(len >> 24); dst[o + 1] = UInt8((len >> 16) & 0xFF)
                    dst[o + 2] = UInt8((len >> 8) & 0xFF); dst[o + 3] = UInt8(len & 0xFF)
                    (dst + o + 4).initialize(from: src + r.lowerBound, count: r.count)
                    o += 4 + r.count
                }
                if count <= maxRanges {
                    for k in 0..<count { write(ranges[k]) }
                } else {
                    forEachNALUnit(in: bytes) { r in if keep(bytes[r.lowerBound] & 0x1F) { write(r) } }
                }
                written = o
            }
            ranges.baseAddress!.deinitialize(count: min(count, maxRanges))
            return (data, FrameSummary(isReference: sawSlice ? sliceRef : anyRef, hasIDR: idr))
        }
    }

    /// Converts an Annex B access unit to length-prefixed (AVCC) NAL units.
    package static func avcc(fromAnnexB bytes: [UInt8], dropParameterSets: Bool = false) -> [UInt8] {
        bytes.withUnsafeBufferPointer { avcc(fromAnnexB: $0, dropParameterSets: dropParameterSets).data }
    }

    /// Builds an AVCDecoderConfigurationRecord (version 1, 4-byte NAL lengths) from SPS and
    /// PPS NAL units (without start codes). Nil when there is no usable SPS or PPS.
    package static func decoderConfigurationRecord(sps: [[UInt8]], pps: [[UInt8]]) -> [UInt8]? {
        let spsList = sps.filter { $0.count >= 4 && $0.count <= 0xFFFF }
        let ppsList = pps.filter { !$0.isEmpty && $0.count <= 0xFFFF }
        guard let first = spsList.first, !ppsList.isEmpty else { return nil }
        var out: [UInt8] = [1, first[1], first[2], first[3], 0xFF, 0xE0 | UInt8(min(spsList.count, 31))]
        for s in spsList.prefix(31) {
            out.append(UInt8(s.count >> 8)); out.append(UInt8(s.count & 0xFF)); out.append(contentsOf: s)
        }
        out.append(UInt8(min(ppsList.count, 255)))
        for p in ppsList.prefix(255) {
            out.append(UInt8(p.count >> 8)); out.append(UInt8(p.count & 0xFF)); out.append(contentsOf: p)
        }
        // High profiles carry chroma format and bit depths after the PPS list (ISO/IEC 14496-15).
        if Self.highProfiles.contains(first[1]), let ext = highProfileFields(sps: first) {
            out += [0xFC | ext.chromaFormat, 0xF8 | ext.lumaDepthMinus8, 0xF8 | ext.chromaDepthMinus8, 0]
        }
        return out
    }

    /// profile_idc values whose SPS carries chroma_format_idc and bit depths (H.264 7.3.2.1.1).
    static let highProfiles: Set<UInt8> = [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135]

    /// chroma_format_idc and bit depths from a High-profile SPS; nil when it cannot be read.
    static func highProfileFields(sps: [UInt8]) -> (chromaFormat: UInt8, lumaDepthMinus8: UInt8, chromaDepthMinus8: UInt8)? {
        // RBSP without emulation-prevention bytes, after the NAL header and the 3 fixed bytes.
        var rbsp: [UInt8] = []
        var zeros = 0
        for byte in sps.dropFirst(4).prefix(32) {
            if zeros >= 2 && byte == 3 { zeros = 0; continue }
            zeros = byte == 0 ? zeros + 1 : 0
            rbsp.append(byte)
        }
        var bit = 0
        func readBit() -> Int? {
            guard bit < rbsp.count * 8 else { return nil }
            defer { bit += 1 }
            return Int(rbsp[bit >> 3] >> (7 - UInt8(bit & 7))) & 1
        }
        func readUE() -> Int? {
            var leading = 0
            while true {
                guard let b = readBit() else { return nil }
                if b == 1 { break }
                leading += 1
                if leading > 16 { return nil }
            }
            var value = 0
            for _ in 0..<leading {
                guard let b = readBit() else { return nil }
                value = value << 1 | b
            }
            return (1 << leading) - 1 + value
        }
        guard readUE() != nil, let chroma = readUE(), chroma <= 3 else { return nil }  // sps id, chroma_format_idc
        if chroma == 3 { guard readBit() != nil else { return nil } }  // separate_colour_plane_flag
        guard let luma = readUE(), let chromaDepth = readUE(), luma <= 7, chromaDepth <= 7 else { return nil }
        return (UInt8(chroma), UInt8(luma), UInt8(chromaDepth))
    }

    /// Collects the SPS and PPS NAL units of an Annex B buffer (e.g. encoder extradata or a
    /// keyframe with in-band parameter sets) and builds the configuration record from them.
    package static func decoderConfigurationRecord(fromAnnexB bytes: [UInt8]) -> [UInt8]? {
        let (sps, pps) = parameterSets(inAnnexB: bytes)
        return decoderConfigurationRecord(sps: sps, pps: pps)
    }

    /// The SPS and PPS NAL units of an Annex B buffer, in order, duplicates removed.
    package static func parameterSets(inAnnexB bytes: [UInt8]) -> (sps: [[UInt8]], pps: [[UInt8]]) {
        var sps: [[UInt8]] = [], pps: [[UInt8]] = []
        for unit in nalUnits(in: bytes) {
            switch unit[0] & 0x1F {
            case NALType.sps where !sps.contains(unit): sps.append(unit)
            case NALType.pps where !pps.contains(unit): pps.append(unit)
            default: break
            }
        }
        return (sps, pps)
    }
}
