/// Live loudness normalisation of a push's programme sound (ITU-R BS.1770-4 / EBU R128): the
/// integrated loudness to bring it to, and the true-peak ceiling it never exceeds.
///
/// Set it on ``MediaSourceOptions/loudness``: the sound is then always decoded and encoded
/// (a copyable AAC track is no longer copied), and goes through the loudness stage after the
/// mixer, so music and effects are normalised with the programme. Without it the sound is
/// untouched.
public struct LoudnessTarget: Sendable, Equatable {
    /// The integrated loudness to reach, LUFS: -23 (EBU R128), -24 (ATSC A/85), -16 or -14
    /// (streaming services).
    public let integrated: Double
    /// The true-peak ceiling, dBTP (-1 by default).
    public let truePeak: Double

    /// The accepted target range, LUFS.
    public static let integratedRange: ClosedRange<Double> = -70 ... -5
    /// The accepted ceiling range, dBTP.
    public static let truePeakRange: ClosedRange<Double> = -9 ... 0

    /// Creates a target; throws `loudnessSettingsInvalid` (805505281) outside
    /// ``integratedRange`` or ``truePeakRange``.
    public init(integrated: Double, truePeak: Double = -1) throws(LivePushError) {
        guard integrated.isFinite, Self.integratedRange.contains(integrated) else {
            throw LivePushError(.loudnessSettingsInvalid, "loudness \(integrated) LUFS: give -70 to -5 (e.g. -23)")
        }
        guard truePeak.isFinite, Self.truePeakRange.contains(truePeak) else {
            throw LivePushError(.loudnessSettingsInvalid, "true peak \(truePeak) dBTP: give -9 to 0 (e.g. -1)")
        }
        self.integrated = integrated
        self.truePeak = truePeak
    }
}
