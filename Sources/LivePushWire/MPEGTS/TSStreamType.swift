/// The `stream_type` of an elementary stream in the PMT (ISO/IEC 13818-1 table 2-34, and
/// SCTE 35 for the cue stream).
public enum TSStreamType: UInt8, Sendable {
    case h264 = 0x1B
    case hevc = 0x24
    /// AAC with ADTS headers (ISO/IEC 13818-7 audio).
    case aacADTS = 0x0F
    /// SCTE-35 splice information; a receiver knows it by this type together with the
    /// "CUEI" registration descriptor in the PMT.
    case scte35 = 0x86
}
