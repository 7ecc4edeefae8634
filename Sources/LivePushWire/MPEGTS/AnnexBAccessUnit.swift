/// Rewrites an access unit from AVCC (length-prefixed NAL units, as in MP4 and FLV) to the
/// Annex B byte stream MPEG-TS carries: every NAL unit behind a 4-byte start code, an access
/// unit delimiter first (H.222.0 requires one at the start of each H.264/HEVC access unit in
/// a transport stream), and on keyframes the parameter sets, so a receiver can start there.
enum AnnexBAccessUnit {
    static let startCode: [UInt8] = [0x00, 0x00, 0x00, 0x01]
    /// H.264 AUD (nal_unit_type 9), primary_pic_type 7 "any slice type", then the stop bit.
    static let h264Delimiter: [UInt8] = [0x09, 0xF0]
    /// HEVC AUD (nal_unit_type 35, layer 0, temporal id 1), pic_type 2 "any", then the stop bit.
    static let hevcDelimiter: [UInt8] = [0x46, 0x01, 0x50]

    /// Appends the Annex B form of `avcc` to `out`. The access unit's own delimiters are
    /// dropped (one is written first); parameter sets from `configuration` go right after the
    /// delimiter of a keyframe unless the access unit has all of them itself. A NAL unit whose
    /// length runs past the end ends the access unit there: what follows it cannot be found.
    static func append(_ avcc: [UInt8], configuration: VideoDecoderConfiguration, keyframe: Bool,
                       to out: inout [UInt8]) {
        let units = nalUnits(in: avcc, lengthSize: configuration.nalLengthSize)
        let delimiterType: UInt8 = configuration.codec == .h264 ? 9 : 35
        out.reserveCapacity(out.count + avcc.count + 64
            + configuration.parameterSets.reduce(0) { $0 + $1.count + 4 })
        out.append(contentsOf: startCode)
        out.append(contentsOf: configuration.codec == .h264 ? h264Delimiter : hevcDelimiter)
        if keyframe, !configuration.parameterSets.isEmpty {
            let carried = Set(units.map { configuration.nalType(avcc[$0.lowerBound]) })
            if !configuration.parameterSetTypes.isSubset(of: carried) {
                for set in configuration.parameterSets {
                    out.append(contentsOf: startCode)
                    out.append(contentsOf: set)
                }
            }
        }
        for unit in units where configuration.nalType(avcc[unit.lowerBound]) != delimiterType {
            out.append(contentsOf: startCode)
            out.append(contentsOf: avcc[unit])
        }
    }

    /// The ranges of the non-empty NAL units of an AVCC access unit.
    static func nalUnits(in avcc: [UInt8], lengthSize: Int) -> [Range<Int>] {
        var units: [Range<Int>] = []
        var position = 0
        while avcc.count - position >= lengthSize {
            var length = 0
            for i in 0..<lengthSize { length = length << 8 | Int(avcc[position + i]) }
            position += lengthSize
            guard avcc.count - position >= length else { break }
            if length > 0 { units.append(position..<(position + length)) }
            position += length
        }
        return units
    }
}
