/// A codec configuration the MPEG-TS muxer cannot use.
public enum TSConfigurationError: Error, Equatable, Sendable {
    /// An AVCDecoderConfigurationRecord or HEVCDecoderConfigurationRecord that ends inside
    /// one of its fields.
    case truncatedRecord
    /// A record whose `configurationVersion` is not 1.
    case unsupportedRecordVersion(UInt8)
    /// AAC that ADTS cannot describe (ADTS carries object types 1–4, the 13 standard sample
    /// rates and channel configurations 1–7), or an AudioSpecificConfig that is cut short.
    case unsupportedAudio(String)
}
