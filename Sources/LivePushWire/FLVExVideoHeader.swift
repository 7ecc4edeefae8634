/// Enhanced RTMP's video tag header (Veovera E-RTMP v1/v2, "ExVideoTagHeader"): HEVC, AV1 and
/// VP9 in FLV tags and RTMP messages, which the legacy 4-bit CodecID cannot name.
///
/// The first byte is `IsExHeader` (bit 7), the 3-bit FrameType and the 4-bit PacketType; a
/// FourCC names the codec. Only `hvc1` (and `avc1`) coded frames carry a 24-bit composition
/// time; `PacketTypeCodedFramesX` drops it when it is zero.
public enum FLVExVideoCodec: UInt32, Sendable, CaseIterable {
    case hevc = 0x6876_6331  // "hvc1"
    case av1 = 0x6176_3031   // "av01"
    case vp9 = 0x7670_3039   // "vp09"

    /// The FourCC's four characters.
    public var fourCC: String {
        String(decoding: [24, 16, 8, 0].map { UInt8((rawValue >> $0) & 0xFF) }, as: UTF8.self)
    }

    public init?(fourCC: String) {
        guard let codec = Self.allCases.first(where: { $0.fourCC == fourCC }) else { return nil }
        self = codec
    }

    public var fourCCBytes: [UInt8] { [24, 16, 8, 0].map { UInt8((rawValue >> $0) & 0xFF) } }
}

extension FLVBody {
    /// E-RTMP packet types.
    public enum ExVideoPacketType: UInt8, Sendable {
        case sequenceStart = 0, codedFrames = 1, sequenceEnd = 2, codedFramesX = 3, metadata = 4
    }

    private static func exVideoFirstByte(keyframe: Bool, _ type: ExVideoPacketType) -> UInt8 {
        0x80 | (keyframe ? 0x10 : 0x20) | type.rawValue
    }

    /// `SequenceStart`: the codec's configuration record (hvcC, av1C or vpcC) follows.
    public static func exVideoSequenceStart(_ codec: FLVExVideoCodec, configuration: [UInt8]) -> [UInt8] {
        [exVideoFirstByte(keyframe: true, .sequenceStart)] + codec.fourCCBytes + configuration
    }

    /// `SequenceEnd`: the stream of this codec ends.
    public static func exVideoSequenceEnd(_ codec: FLVExVideoCodec) -> [UInt8] {
        [exVideoFirstByte(keyframe: true, .sequenceEnd)] + codec.fourCCBytes
    }

    /// What precedes a coded frame: 5 bytes, or 8 for HEVC with a composition time. HEVC's data
    /// is length-prefixed NAL units; AV1's, OBUs as in MP4 (no temporal delimiters); VP9's, a frame.
    public static func exVideoFramePrefix(_ codec: FLVExVideoCodec, keyframe: Bool, compositionTimeMs: Int32) -> FLVTagPrefix {
        if codec == .hevc && compositionTimeMs != 0 {
            let cts = UInt32(bitPattern: compositionTimeMs)
            return FLVTagPrefix([exVideoFirstByte(keyframe: keyframe, .codedFrames)] + codec.fourCCBytes
                                + [UInt8((cts >> 16) & 0xFF), UInt8((cts >> 8) & 0xFF), UInt8(cts & 0xFF)])
        }
        let type: ExVideoPacketType = codec == .hevc ? .codedFramesX : .codedFrames
        return FLVTagPrefix([exVideoFirstByte(keyframe: keyframe, type)] + codec.fourCCBytes)
    }
}
