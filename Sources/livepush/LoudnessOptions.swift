import ArgumentParser
import LivePush

/// `--loudness LUFS` and `--true-peak DBTP` of `push` and `playout`: live loudness
/// normalisation of the programme sound (``LoudnessTarget``).
///
/// Both take their value unconditionally: a negative number after a space (`--loudness -23`)
/// would otherwise read as an unknown option, and the parser would say "Missing value".
struct LoudnessOptions: ParsableArguments {
    @Option(name: .customLong("loudness"), parsing: .unconditional, help: ArgumentHelp(
        "Normalise the sound live to this integrated loudness (EBU R128 / ITU-R BS.1770-4), LUFS from -70 to -5: -23 (EBU R128), -24 (ATSC A/85), -16 or -14 (streaming). Re-encodes the audio.",
        valueName: "LUFS"))
    var loudness: Double?

    @Option(name: .customLong("true-peak"), parsing: .unconditional, help: ArgumentHelp(
        "The true-peak ceiling with --loudness, dBTP from -9 to 0 (default -1).", valueName: "DBTP"))
    var truePeak: Double?

    /// The target asked for (nil without --loudness); out of range throws loudnessSettingsInvalid.
    func target() throws(LivePushError) -> LoudnessTarget? {
        guard let loudness else { return nil }
        return try LoudnessTarget(integrated: loudness, truePeak: truePeak ?? -1)
    }

    func validate() throws {
        if truePeak != nil && loudness == nil { throw ValidationError("--true-peak needs --loudness") }
        do throws(LivePushError) {
            _ = try target()
        } catch {
            throw ValidationError(error.description)
        }
    }

    func apply(to config: inout PushConfig) {
        config.media.loudness = try? target()
    }
}
