/// The packet identifiers LivePush's MPEG-TS uses. One program, fixed PIDs: a receiver that
/// remembers them across reconnections (or an operator reading a TSDuck dump) sees the same
/// numbers every time, and an input switch never moves a track.
public enum TSPID {
    /// Program Association Table (fixed by ISO/IEC 13818-1).
    public static let programAssociation: UInt16 = 0x0000
    /// Program Map Table of program 1.
    public static let programMap: UInt16 = 0x1000
    /// The video elementary stream (H.264 or HEVC); it carries the PCR when there is video.
    public static let video: UInt16 = 0x0100
    /// The AAC elementary stream (ADTS); it carries the PCR when there is no video.
    public static let audio: UInt16 = 0x0101
    /// SCTE-35 `splice_info_section`s.
    public static let scte35: UInt16 = 0x0102
    /// "No PCR" in a PMT whose program has neither video nor audio.
    static let none: UInt16 = 0x1FFF
}
