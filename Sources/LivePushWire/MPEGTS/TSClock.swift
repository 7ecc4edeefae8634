/// How LivePush's timestamps (microseconds) become MPEG-TS clocks: 90 kHz PTS/DTS and the
/// 27 MHz PCR.
///
/// Every PTS and DTS is the packet's time plus `timestampOffset` (1.4 s), exactly:
/// a DTS of D µs is written as `(D + 1_400_000) * 9 / 100` (rounded down), masked to 33 bits.
/// The PCR runs `pcrDelay` (0.7 s) behind the DTS of the access unit it travels with, so a
/// decoder following the T-STD model receives each frame 0.7 s before it decodes it. These are
/// ffmpeg's defaults (`-muxdelay 0.7`, streams starting at 1.4 s): receivers built around
/// ffmpeg's output see the same timing from LivePush, and a stream may start with timestamps
/// down to -0.7 s (AAC priming) without its PCR going negative.
public enum TSClock {
    /// Added to every PTS and DTS, in microseconds.
    public static let timestampOffset: Int64 = 1_400_000
    /// How far the PCR runs behind the DTS it is derived from, in microseconds.
    public static let pcrDelay: Int64 = 700_000
    /// 33 bits of 90 kHz ticks.
    static let mask33: UInt64 = (1 << 33) - 1

    /// The 90 kHz PTS/DTS of a time in microseconds.
    public static func ticks90kHz(_ microseconds: Int64) -> UInt64 {
        UInt64(bitPattern: floorDivide((microseconds + timestampOffset) * 9, 100)) & mask33
    }

    /// The PCR time (microseconds, before conversion) for an access unit decoded at `dts`.
    static func pcrTime(at dts: Int64) -> Int64 {
        dts + timestampOffset - pcrDelay
    }

    /// A PCR time in microseconds as `program_clock_reference_base` (90 kHz, 33 bits) and
    /// `_extension` (27 MHz remainder, 0–299).
    static func pcr(_ microseconds: Int64) -> (base: UInt64, extension: UInt16) {
        let ticks27MHz = microseconds * 27
        let base = floorDivide(ticks27MHz, 300)
        return (UInt64(bitPattern: base) & mask33, UInt16(ticks27MHz - base * 300))
    }

    /// Division rounding toward minus infinity, so that times before zero stay exact.
    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }
}
