/// The AudioSpecificConfig (ISO/IEC 14496-3 1.6.2.1) of AAC-LC as libavcodec's native AAC
/// encoder writes it: object type 2, the sampling-frequency index, the channel configuration,
/// a GASpecificConfig of zeros, and SBR marked absent by a sync extension (0x2b7, object type
/// 5, flag 0): 5 bytes. It depends only on the rate and the channel count, so the push's sound
/// encode after the clock (``AudioEncodeStage``) knows the header outputs announce without
/// opening an encoder (a push that only copies its sound opens none).
enum AACLowComplexityConfig {
    /// The sampling-frequency index table of ISO/IEC 14496-3 (table 1.18).
    static let sampleRates = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]

    /// The AAC-LC AudioSpecificConfig for `sampleRate` and `channels` (1...7); nil for a rate
    /// AAC has no index for (the encoder refuses those too).
    static func audioSpecificConfig(sampleRate: Int, channels: Int) -> [UInt8]? {
        guard let index = sampleRates.firstIndex(of: sampleRate), (1...7).contains(channels) else { return nil }
        var bits = BitWriter()
        bits.put(2, count: 5)                 // audioObjectType: AAC LC
        bits.put(UInt32(index), count: 4)     // samplingFrequencyIndex
        bits.put(UInt32(channels), count: 4)  // channelConfiguration
        bits.put(0, count: 3)                 // frameLengthFlag, dependsOnCoreCoder, extensionFlag
        bits.put(0x2b7, count: 11)            // syncExtensionType
        bits.put(5, count: 5)                 // extensionAudioObjectType: SBR
        bits.put(0, count: 1)                 // sbrPresentFlag
        return bits.bytes
    }

    /// MSB-first bits into bytes, the last one padded with zeros.
    private struct BitWriter {
        private(set) var bytes: [UInt8] = []
        private var used = 8

        mutating func put(_ value: UInt32, count: Int) {
            for shift in stride(from: count - 1, through: 0, by: -1) {
                if used == 8 {
                    bytes.append(0)
                    used = 0
                }
                bytes[bytes.count - 1] |= UInt8((value >> UInt32(shift)) & 1) << UInt8(7 - used)
                used += 1
            }
        }
    }
}
