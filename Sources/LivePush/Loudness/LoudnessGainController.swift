#if canImport(Glibc)
import Glibc  // the math (log10, pow, exp, tan): full Foundation would link ICU, +6 MiB of RSS in every process
#endif

/// Decides, frame by frame, the gain (dB) that brings a programme to a target integrated
/// loudness, live: no pass over the whole programme is possible, so it follows the level it
/// measures, with a fast attack and a quick but smooth release.
///
/// - Level: the last 600 ms of 100 ms sub-blocks, in LUFS, less the loudest and the quietest
///   one, averaged (a mean of decibels: after a loud clip a quiet one is found within half a
///   second, where an energy window would wait for the last loud sub-block to leave it; a
///   sub-block with a click in it does not pull the level). Silent sub-blocks (under -60 LUFS)
///   and those more than 30 LU under the level (a pause) are left out, unless the whole window
///   is: then the programme has changed, and the level follows it.
/// - Attack: the level is raised at once to the loudness of the last two frames' quarters
///   (5.3 ms each at 48 kHz; the third loudest of the eight) less 3 LU: a loud start or a step
///   is brought most of the way down in the frame it comes in (the gain is applied to the frame
///   before it, ``LoudnessNormalizer``, so the fade down ends where the step begins), and a
///   click of up to two quarters moves nothing (the true-peak limiter catches it). Before the
///   first 100 ms the level is the loudness so far.
/// - Release (gain rising): towards the wanted gain with a 0.15 s time constant.
/// - Trim: from 5 s on, the output's integrated loudness is compared with the target and a
///   correction of at most ±3 dB follows it at 0.1 dB/s (slow: it answers a bias, and the
///   integrated loudness remembers every past deviation, so a fast trim overshoots), so a bias of the level estimate on
///   real programme (speech, music) does not stay in the integrated result.
/// - The gain stays within -40 and +24 dB: a near-silent source is not raised into noise.
///
/// The price of following a programme this closely is some of its loudness range: a live
/// normaliser that must meet a target within seconds of a change behaves like a slow AGC.
struct LoudnessGainController: Sendable {
    static let maxBoost = 24.0
    static let maxCut = -40.0
    static let silence = -60.0

    let target: Double
    /// The gain decided for the last frame, dB; nil until sound other than silence came.
    private(set) var gain: Double?
    private(set) var trim = 0.0
    /// The loudness of the last eight quarter frames (nil: silent), newest last.
    private var recentParts: [Double?] = []
    /// The last steady level (LUFS), for the pause gate.
    private var steady: Double?

    init(target: Double) {
        self.target = target
    }

    /// The gain (dB) for a frame of `seconds`, from the input meter after it measured the
    /// frame (`partPowers`: the mean K-weighted power of its quarters) and, once a second from 5 s on,
    /// the output's integrated loudness so far (`sinceTrim`: seconds since the last one).
    mutating func next(input meter: LoudnessMeter, partPowers: [Double], seconds: Double,
                       outputIntegrated: Double?, sinceTrim: Double) -> Double {
        recentParts.append(contentsOf: partPowers.map(LoudnessMeter.lufs))
        if recentParts.count > 8 { recentParts.removeFirst(recentParts.count - 8) }
        let level = level(meter: meter)
        if let integrated = outputIntegrated {
            let step = 0.1 * sinceTrim
            trim = min(3, max(-3, trim + min(step, max(-step, target - integrated))))
        }
        guard let level, level >= Self.silence else { return gain ?? 0 }
        let wanted = min(Self.maxBoost, max(Self.maxCut, target - level + trim))
        guard let current = gain else {
            gain = wanted
            return wanted
        }
        let next = wanted <= current ? wanted : current + (wanted - current) * (1 - exp(-seconds / 0.15))
        gain = next
        return next
    }

    /// The level the gain answers (LUFS), or nil while everything measured is silent.
    private mutating func level(meter: LoudnessMeter) -> Double? {
        let parts = recentParts.compactMap { $0 }.sorted(by: >)
        let fast = parts.count >= 3 ? parts[2] - 3 : nil
        let blocks = meter.subBlockLoudness(last: 6).compactMap { $0 }.filter { $0 >= Self.silence }
        guard !blocks.isEmpty else {
            return steady == nil ? meter.meanPowerSoFar(last: 4).flatMap(LoudnessMeter.lufs) : nil
        }
        var kept = blocks.filter { $0 >= (steady ?? -.infinity) - 30 }
        if kept.isEmpty { kept = blocks }
        kept.sort()
        if kept.count >= 4 { kept = Array(kept.dropFirst().dropLast()) }
        let level = kept.reduce(0, +) / Double(kept.count)
        steady = level
        return [level, fast].compactMap { $0 }.max()
    }
}
