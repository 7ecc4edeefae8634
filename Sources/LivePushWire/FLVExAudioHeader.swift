/// Enhanced RTMP v2's audio tag header ("ExAudioTagHeader"): codecs the legacy 4-bit
/// SoundFormat cannot name, by FourCC.
///
/// The first byte is SoundFormat 9 (`ExHeader`) in the high nibble and the AudioPacketType in
/// the low one; the FourCC follows. Rate, size and channels are no longer in the flags: the
/// codec's own configuration (`SequenceStart`) says them.
public enum FLVExAudioCodec: UInt32, Sendable, CaseIterable {
    case opus = 0x4F70_7573  // "Opus"

    /// The FourCC's four characters.
    public var fourCC: String {
        String(decoding: fourCCBytes, as: UTF8.self)
    }

    var fourCCBytes: [UInt8] { [24, 16, 8, 0].map { UInt8((rawValue >> $0) & 0xFF) } }
}

extension FLVBody {
    /// E-RTMP v2 audio packet types (the ones LivePush sends).
    public enum ExAudioPacketType: UInt8, Sendable {
        case sequenceStart = 0, codedFrames = 1, sequenceEnd = 2
    }

    private static func exAudioFirstByte(_ type: ExAudioPacketType) -> UInt8 { 0x90 | type.rawValue }

    /// `SequenceStart`: the codec's configuration follows (Opus: the `OpusHead` identification
    /// header, RFC 7845 5.1, as in MP4's dOps and Matroska's CodecPrivate).
    public static func exAudioSequenceStart(_ codec: FLVExAudioCodec, configuration: [UInt8]) -> [UInt8] {
        [exAudioFirstByte(.sequenceStart)] + codec.fourCCBytes + configuration
    }

    /// `SequenceEnd`: the stream of this codec ends.
    public static func exAudioSequenceEnd(_ codec: FLVExAudioCodec) -> [UInt8] {
        [exAudioFirstByte(.sequenceEnd)] + codec.fourCCBytes
    }

    /// The 5 bytes before a coded frame (Opus: one packet, as RTP or Ogg carry it).
    public static func exAudioFramePrefix(_ codec: FLVExAudioCodec) -> FLVTagPrefix {
        FLVTagPrefix([exAudioFirstByte(.codedFrames)] + codec.fourCCBytes)
    }
}
