/// Builders for FLV tag *bodies*: what goes in an RTMP audio/video/data message; the same
/// bytes follow the 11-byte FLV tag header in a file.
public enum FLVBody {
    /// AVC sequence header: `0x17 0x00 00 00 00` + AVCDecoderConfigurationRecord.
    public static func avcSequenceHeader(_ decoderConfiguration: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(5 + decoderConfiguration.count)
        out.append(contentsOf: [0x17, 0x00, 0x00, 0x00, 0x00])
        out.append(contentsOf: decoderConfiguration)
        return out
    }

    /// AVC NALU packet: `0x17` (keyframe) or `0x27`, `0x01`, SI24 composition time, AVCC data
    /// (length-prefixed NAL units).
    public static func avcFrame(_ avcc: [UInt8], keyframe: Bool, compositionTimeMs: Int32) -> [UInt8] {
        var out = avcFrameHeader(keyframe: keyframe, compositionTimeMs: compositionTimeMs)
        out.reserveCapacity(5 + avcc.count)
        out.append(contentsOf: avcc)
        return out
    }

    /// The 5 bytes that precede AVCC data in an AVC NALU packet; lets a sender write header
    /// and frame into its own buffer without building the body first.
    public static func avcFrameHeader(keyframe: Bool, compositionTimeMs: Int32) -> [UInt8] {
        avcFramePrefix(keyframe: keyframe, compositionTimeMs: compositionTimeMs).bytes
    }

    /// AVC end of sequence: `0x17 0x02 00 00 00`.
    public static func avcEndOfSequence() -> [UInt8] {
        [0x17, 0x02, 0x00, 0x00, 0x00]
    }

    /// The audio tag header byte for AAC. The FLV specification requires SoundRate=3 (44 kHz),
    /// SoundSize=1 (16 bit) and SoundType=1 (stereo) for AAC whatever the real format is — the
    /// decoder takes the real values from the AudioSpecificConfig — so this is always `0xAF`.
    public static func aacFlags(sampleRate: Int, channels: Int) -> UInt8 {
        0xAF
    }

    /// AAC sequence header: `0xAF 0x00` + AudioSpecificConfig.
    public static func aacSequenceHeader(_ audioSpecificConfig: [UInt8], sampleRate: Int, channels: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(2 + audioSpecificConfig.count)
        out.append(aacFlags(sampleRate: sampleRate, channels: channels))
        out.append(0x00)
        out.append(contentsOf: audioSpecificConfig)
        return out
    }

    /// AAC raw frame: `0xAF 0x01` + raw AAC data (no ADTS header).
    public static func aacFrame(_ raw: [UInt8], sampleRate: Int, channels: Int) -> [UInt8] {
        var out = aacFrameHeader(sampleRate: sampleRate, channels: channels)
        out.reserveCapacity(2 + raw.count)
        out.append(contentsOf: raw)
        return out
    }

    /// The 2 bytes that precede a raw AAC frame.
    public static func aacFrameHeader(sampleRate: Int, channels: Int) -> [UInt8] {
        aacFramePrefix(sampleRate: sampleRate, channels: channels).bytes
    }

    /// Script data body `["@setDataFrame"], "onMetaData", ecmaArray(properties)`.
    /// Use `withSetDataFrame: true` for an RTMP data message sent by a publisher, `false` for an FLV file.
    public static func metadata(_ properties: [AMF0Property], withSetDataFrame: Bool) -> [UInt8] {
        var out: [UInt8] = []
        if withSetDataFrame { AMF0.encode(.string("@setDataFrame"), into: &out) }
        AMF0.encode(.string("onMetaData"), into: &out)
        AMF0.encode(.ecmaArray(properties), into: &out)
        return out
    }
}
