/// An AAC ADTS frame header (ISO/IEC 13818-7), as found in MPEG-TS and raw .aac files.
///
/// FLV wants raw AAC frames plus a 2-byte AudioSpecificConfig; this parses the header so
/// the frame payload can be cut out and the ASC built.
package struct ADTSHeader: Sendable, Equatable {
    /// MPEG-4 audio object type (profile + 1): 2 = AAC LC.
    package var audioObjectType: Int
    /// Index into ``sampleRates``.
    package var samplingFrequencyIndex: Int
    /// The MPEG-4 channel configuration.
    package var channelConfiguration: Int
    /// Header bytes: 7, or 9 with CRC.
    package var headerLength: Int
    /// Header plus payload bytes.
    package var frameLength: Int
    /// Raw data blocks in the frame (usually 1).
    package var rawDataBlocks: Int

    /// The sample rates an index may name.
    package static let sampleRates = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]

    /// Parses the header at the start of `bytes`; nil when there is no valid ADTS header.
    package init?(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count >= 7, bytes[0] == 0xFF, bytes[1] & 0xF6 == 0xF0 else { return nil }
        let protectionAbsent = bytes[1] & 0x01 == 1
        let profile = Int(bytes[2] >> 6)
        let sfi = Int((bytes[2] >> 2) & 0x0F)
        let channels = Int((bytes[2] & 0x01) << 2 | bytes[3] >> 6)
        let length = Int(bytes[3] & 0x03) << 11 | Int(bytes[4]) << 3 | Int(bytes[5] >> 5)
        let header = protectionAbsent ? 7 : 9
        guard sfi < Self.sampleRates.count, length >= header else { return nil }
        audioObjectType = profile + 1
        samplingFrequencyIndex = sfi
        channelConfiguration = channels
        headerLength = header
        frameLength = length
        rawDataBlocks = Int(bytes[6] & 0x03) + 1
    }

    /// Parses a header from the start of `bytes`; nil when there is none.
    package init?(_ bytes: [UInt8]) {
        guard let h = bytes.withUnsafeBufferPointer({ ADTSHeader($0) }) else { return nil }
        self = h
    }

    /// Samples per second.
    package var sampleRate: Int { Self.sampleRates[samplingFrequencyIndex] }

    /// The 2-byte AudioSpecificConfig: 5 bits object type, 4 bits frequency index,
    /// 4 bits channel configuration, 3 zero bits.
    package var audioSpecificConfig: [UInt8] {
        [UInt8((audioObjectType << 3) | (samplingFrequencyIndex >> 1)),
         UInt8(((samplingFrequencyIndex & 1) << 7) | (channelConfiguration << 3))]
    }
}
