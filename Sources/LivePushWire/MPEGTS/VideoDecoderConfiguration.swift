/// What the muxer needs from an AVCDecoderConfigurationRecord (avcC, ISO/IEC 14496-15
/// 5.3.3.1) or HEVCDecoderConfigurationRecord (hvcC, 8.3.3.1): the size of the NAL unit length
/// prefixes in the access units, and the parameter sets to repeat before every keyframe (a
/// receiver may join at any keyframe, and has no other way to learn them in MPEG-TS).
struct VideoDecoderConfiguration: Equatable, Sendable {
    var codec: TSMuxer.VideoCodec
    /// 1, 2 or 4 bytes.
    var nalLengthSize: Int
    /// SPS then PPS (H.264); VPS, SPS then PPS (HEVC). NAL units without start codes.
    var parameterSets: [[UInt8]]

    /// The parameter sets that come in-band: an empty record.
    init(codec: TSMuxer.VideoCodec) {
        self.codec = codec
        nalLengthSize = 4
        parameterSets = []
    }

    init(codec: TSMuxer.VideoCodec, record: [UInt8]) throws(TSConfigurationError) {
        if record.isEmpty {
            self.init(codec: codec)
            return
        }
        guard record[0] == 1 else { throw .unsupportedRecordVersion(record[0]) }
        switch codec {
        case .h264: try self.init(avcC: record)
        case .hevc: try self.init(hvcC: record)
        }
    }

    /// avcC: version, profile, compatibility, level, 6 bits '1' + lengthSizeMinusOne,
    /// 3 bits '1' + numOfSequenceParameterSets, the SPSs (16-bit length each),
    /// numOfPictureParameterSets, the PPSs. Fields after the PPSs (High profiles' chroma
    /// format and bit depths) are not needed.
    private init(avcC record: [UInt8]) throws(TSConfigurationError) {
        var p = 4
        nalLengthSize = Int(try Self.byte(record, &p) & 0x03) + 1
        codec = .h264
        parameterSets = []
        let spsCount = Int(try Self.byte(record, &p) & 0x1F)
        for _ in 0..<spsCount { parameterSets.append(try Self.lengthPrefixed(record, &p)) }
        let ppsCount = Int(try Self.byte(record, &p))
        for _ in 0..<ppsCount { parameterSets.append(try Self.lengthPrefixed(record, &p)) }
    }

    /// hvcC: 21 bytes of profile, tier, level and format fields, then 6 bits + 2 bits
    /// lengthSizeMinusOne, numOfArrays, and per array: completeness and NAL_unit_type, 16-bit
    /// numNalus, each NAL unit with a 16-bit length. VPS (32), SPS (33) and PPS (34) are kept,
    /// in that order; other arrays (SEI) are not repeated.
    private init(hvcC record: [UInt8]) throws(TSConfigurationError) {
        var p = 21
        nalLengthSize = Int(try Self.byte(record, &p) & 0x03) + 1
        codec = .hevc
        var byType: [UInt8: [[UInt8]]] = [:]
        let arrayCount = Int(try Self.byte(record, &p))
        for _ in 0..<arrayCount {
            let type = try Self.byte(record, &p) & 0x3F
            let count = Int(try Self.byte(record, &p)) << 8 | Int(try Self.byte(record, &p))
            for _ in 0..<count { byType[type, default: []].append(try Self.lengthPrefixed(record, &p)) }
        }
        parameterSets = [32, 33, 34].flatMap { byType[$0] ?? [] }
    }

    /// NAL unit types that are parameter sets (H.264: SPS 7, PPS 8; HEVC: VPS 32, SPS 33, PPS 34).
    var parameterSetTypes: Set<UInt8> { codec == .h264 ? [7, 8] : [32, 33, 34] }

    /// The nal_unit_type of a NAL unit's first byte(s).
    func nalType(_ firstByte: UInt8) -> UInt8 {
        codec == .h264 ? firstByte & 0x1F : (firstByte >> 1) & 0x3F
    }

    // Reading the records, failing on truncation.

    private static func byte(_ record: [UInt8], _ position: inout Int) throws(TSConfigurationError) -> UInt8 {
        guard position < record.count else { throw .truncatedRecord }
        defer { position += 1 }
        return record[position]
    }

    /// A NAL unit preceded by its 16-bit length.
    private static func lengthPrefixed(_ record: [UInt8], _ position: inout Int) throws(TSConfigurationError) -> [UInt8] {
        let length = Int(try byte(record, &position)) << 8 | Int(try byte(record, &position))
        guard record.count - position >= length else { throw .truncatedRecord }
        defer { position += length }
        return Array(record[position..<(position + length)])
    }
}
