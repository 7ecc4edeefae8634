/// An AAC stream as ADTS describes it, and the 7-byte ADTS header written before each raw
/// frame (MPEG-TS carries AAC as ADTS, stream_type 0x0F; FLV and MP4 carry raw frames and
/// give the configuration once, in an AudioSpecificConfig).
public struct AACConfiguration: Equatable, Sendable {
    /// The sampling frequencies ADTS can signal, by sampling_frequency_index.
    static let sampleRates = [96_000, 88_200, 64_000, 48_000, 44_100, 32_000, 24_000, 22_050,
                              16_000, 12_000, 11_025, 8_000, 7_350]
    /// ADTS headers are at most 13 bits of frame length, header included.
    static let maximumFrameLength = 0x1FFF
    static let headerSize = 7

    /// MPEG-4 audio object type: 1 Main, 2 LC, 3 SSR, 4 LTP (what ADTS's 2-bit profile can say).
    public let audioObjectType: Int
    public let sampleRate: Int
    public let channels: Int
    let samplingFrequencyIndex: Int
    /// 1–6 channels are configurations 1–6; 8 channels (7.1) is configuration 7.
    let channelConfiguration: Int

    public init(audioObjectType: Int = 2, sampleRate: Int, channels: Int) throws(TSConfigurationError) {
        guard (1...4).contains(audioObjectType) else {
            throw .unsupportedAudio("audio object type \(audioObjectType); ADTS carries 1–4")
        }
        guard let index = Self.sampleRates.firstIndex(of: sampleRate) else {
            throw .unsupportedAudio("sample rate \(sampleRate)")
        }
        guard (1...6).contains(channels) || channels == 8 else { throw .unsupportedAudio("\(channels) channels") }
        self.audioObjectType = audioObjectType
        self.sampleRate = sampleRate
        self.channels = channels
        samplingFrequencyIndex = index
        channelConfiguration = channels == 8 ? 7 : channels
    }

    /// From an AudioSpecificConfig (ISO/IEC 14496-3 1.6.2.1), e.g. `12 10` for AAC-LC at
    /// 44.1 kHz in stereo. HE-AAC (SBR, PS) is written as its AAC-LC core at the core rate, as
    /// ADTS does: a decoder finds the SBR data in the frames.
    public init(audioSpecificConfig asc: [UInt8]) throws(TSConfigurationError) {
        var bits = 0
        func read(_ count: Int) throws(TSConfigurationError) -> Int {
            guard bits + count <= asc.count * 8 else { throw .unsupportedAudio("AudioSpecificConfig cut short") }
            var value = 0
            for _ in 0..<count {
                value = value << 1 | Int(asc[bits / 8] >> (7 - UInt8(bits % 8)) & 1)
                bits += 1
            }
            return value
        }
        func objectType() throws(TSConfigurationError) -> Int {
            let type = try read(5)
            return type == 31 ? 32 + (try read(6)) : type
        }
        func sampleRate() throws(TSConfigurationError) -> Int {
            let index = try read(4)
            if index == 15 { return try read(24) }
            guard index < Self.sampleRates.count else { throw .unsupportedAudio("sampling frequency index \(index)") }
            return Self.sampleRates[index]
        }
        var type = try objectType()
        let rate = try sampleRate()
        let channelConfiguration = try read(4)
        if type == 5 || type == 29 {  // SBR or PS: the extension's rate, then the core type
            _ = try sampleRate()
            type = try objectType()
        }
        guard (1...7).contains(channelConfiguration) else {
            throw .unsupportedAudio("channel configuration \(channelConfiguration)")
        }
        try self.init(audioObjectType: type, sampleRate: rate, channels: channelConfiguration == 7 ? 8 : channelConfiguration)
    }

    /// The ADTS header of a frame of `rawLength` bytes: MPEG-4, no CRC, buffer fullness
    /// 0x7FF (variable rate), one raw data block. Nil when the frame is too long for ADTS.
    func adtsHeader(rawLength: Int) -> [UInt8]? {
        let length = rawLength + Self.headerSize
        guard length <= Self.maximumFrameLength else { return nil }
        let profile = audioObjectType - 1
        return [
            0xFF, 0xF1,  // syncword, MPEG-4, layer 0, protection_absent
            UInt8(profile << 6 | samplingFrequencyIndex << 2 | channelConfiguration >> 2),
            UInt8((channelConfiguration & 3) << 6 | length >> 11),
            UInt8((length >> 3) & 0xFF),
            UInt8((length & 7) << 5 | 0x1F),
            0xFC,
        ]
    }
}
