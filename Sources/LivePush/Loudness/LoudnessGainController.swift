import Foundation

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
/// - Attack: the level is raised at once to the loudness of the last three frames (64 ms at
///   48 kHz; the quietest of them) less 3 LU: a loud start or a step is brought most of the way
///   down within 64 ms, and a click shorter than a frame moves nothing (the true-peak limiter
///   after this catches it, and what a frame's ramp lets through). Before the first 100 ms the
///   level is the loudness so far.
/// - Release (gain rising): towards the wanted gain with a 0.15 s time constant.
/// - Trim: from 5 s on, the output's integrated loudness is compared with the target and a
///   correction of at most ±6 dB follows it at 0.5 dB/s, so a bias of the level estimate on
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
    /// The loudness of the last three frames (nil: silent), newest last.
    private var recentFrames: [Double?] = []
    /// The last steady level (LUFS), for the pause gate.
    private var steady: Double?

    init(target: Double) {
        self.target = target
    }

    /// The gain (dB) for a frame of `seconds`, from the input meter after it measured the
    /// frame (`framePower`: the frame's mean K-weighted power) and, once a second from 5 s on,
    /// the output's integrated loudness so far (`sinceTrim`: seconds since the last one).
    mutating func next(input meter: LoudnessMeter, framePower: Double, seconds: Double,
                       outputIntegrated: Double?, sinceTrim: Double) -> Double {
        recentFrames.append(LoudnessMeter.lufs(framePower))
        if recentFrames.count > 3 { recentFrames.removeFirst() }
        let level = level(meter: meter)
        if let integrated = outputIntegrated {
            let step = 0.5 * sinceTrim
            trim = min(6, max(-6, trim + min(step, max(-step, target - integrated))))
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
        let frames = recentFrames.compactMap { $0 }
        let fast = recentFrames.count == 3 && frames.count == 3 ? frames.min().map { $0 - 3 } : nil
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
