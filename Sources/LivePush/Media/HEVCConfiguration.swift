/// HEVC for Enhanced RTMP: an encoder's Annex B output (libx265) made into what an `hvc1`
/// stream carries: length-prefixed NAL units and an HEVCDecoderConfigurationRecord (hvcC,
/// ISO/IEC 14496-15 8.3.3) built from the VPS, SPS and PPS.
enum HEVCConfiguration {
    /// NAL unit types (ITU-T H.265 table 7-1) that belong in the hvcC, not in the frames.
    static let vps: UInt8 = 32, sps: UInt8 = 33, pps: UInt8 = 34, accessUnitDelimiter: UInt8 = 35

    static func nalType(_ firstByte: UInt8) -> UInt8 { (firstByte >> 1) & 0x3F }

    /// The hvcC for the parameter sets in `annexB`; nil without an SPS.
    ///
    /// The profile, tier and level come from the SPS's profile_tier_level, which starts
    /// byte-aligned 3 bytes in (after the 2-byte NAL header and one byte of ids): 12 bytes
    /// copied as they are. Chroma format and bit depth are those LivePush encodes (4:2:0, 8 bits).
    static func record(fromAnnexB annexB: [UInt8]) -> [UInt8]? {
        var sets: [UInt8: [[UInt8]]] = [:]
        for unit in AnnexBConverter.nalUnits(in: annexB) where !unit.isEmpty {
            let type = nalType(unit[0])
            if [vps, sps, pps].contains(type) { sets[type, default: []].append(unit) }
        }
        guard let sequence = sets[sps]?.first else { return nil }
        let rbsp = withoutEmulationPrevention(sequence)
        guard rbsp.count >= 15 else { return nil }
        let profileTierLevel = Array(rbsp[3..<15])
        var record: [UInt8] = [1]
        record += profileTierLevel[0..<1]          // profile_space, tier, profile_idc
        record += profileTierLevel[1..<5]          // profile compatibility flags
        record += profileTierLevel[5..<11]         // constraint indicator flags
        record += profileTierLevel[11..<12]        // level_idc
        record += [0xF0, 0x00]                     // min_spatial_segmentation_idc 0
        record += [0xFC]                           // parallelismType 0
        record += [0xFD]                           // chroma_format_idc 1 (4:2:0)
        record += [0xF8, 0xF8]                     // bit depths 8
        record += [0x00, 0x00]                     // avgFrameRate unknown
        record += [0x0F]                           // constantFrameRate 0, numTemporalLayers 1, nested 1, 4-byte lengths
        let arrays = [vps, sps, pps].filter { sets[$0] != nil }
        record.append(UInt8(arrays.count))
        for type in arrays {
            let units = sets[type]!
            record.append(0x80 | type)  // array_completeness 1
            record += [UInt8(units.count >> 8), UInt8(units.count & 0xFF)]
            for unit in units { record += [UInt8(unit.count >> 8), UInt8(unit.count & 0xFF)] + unit }
        }
        return record
    }

    /// One access unit in Annex B made length-prefixed (4 bytes), without its parameter sets
    /// and delimiter (the hvcC carries those).
    static func lengthPrefixed(fromAnnexB bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        AnnexBConverter.forEachNALUnit(in: bytes) { range in
            guard !range.isEmpty else { return }
            let type = nalType(bytes[range.lowerBound])
            guard ![vps, sps, pps, accessUnitDelimiter].contains(type) else { return }
            let n = UInt32(range.count)
            out += [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)]
            out += bytes[range]
        }
        return out
    }

    /// The RBSP of a NAL unit: every `00 00 03` made `00 00`.
    static func withoutEmulationPrevention(_ unit: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var zeros = 0
        for byte in unit {
            if zeros >= 2 && byte == 3 {
                zeros = 0
                continue
            }
            zeros = byte == 0 ? zeros + 1 : 0
            out.append(byte)
        }
        return out
    }
}
