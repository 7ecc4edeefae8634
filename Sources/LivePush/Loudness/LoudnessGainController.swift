import Foundation

/// Decides, frame by frame, the gain (dB) that brings a programme to a target integrated
/// loudness, live: no pass over the whole programme is possible, so it follows the level it
/// measures, with a fast attack and a quick but smooth release.
///
/// - Level: the mean of the last second's 100 ms sub-blocks, in LUFS, less the loudest and the
///   quietest fifth (a mean of decibels, so
///   after a loud clip a quiet one is found within about a second rather than when the last
///   loud sub-block has left an energy window), with silent and much quieter sub-blocks (a
///   pause, below -60 LUFS or 20 LU under the level) left out, so pauses are not boosted.
/// - Attack: the level is raised at once to the loudness of the last three frames (64 ms at
///   48 kHz; the quietest of them) less 4 LU: a loud start or a step is brought most of the way
///   down within 64 ms, and a click shorter than a frame moves nothing (the true-peak limiter
///   after this catches it, and what a frame's ramp lets through). Before the first 100 ms the
///   level is the loudness so far.
/// - Release (gain rising): towards the wanted gain with a 0.3 s time constant.
/// - Trim: from 5 s on, the output's integrated loudness is compared with the target and a
///   correction of at most ±6 dB follows it at 0.5 dB/s, so a bias of the level estimate on
///   real programme (speech, music) does not stay in the integrated result.
/// - The gain stays within -40 and +24 dB: a near-silent source is not raised into noise.
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
        let level = Self.level(meter: meter, recentFrames: recentFrames)
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
        let next = wanted <= current ? wanted : current + (wanted - current) * (1 - exp(-seconds / 0.3))
        gain = next
        return next
    }

    /// The level the gain answers (LUFS), or nil while everything measured is silent.
    static func level(meter: LoudnessMeter, recentFrames: [Double?]) -> Double? {
        let fast = recentFrames.count == 3 && recentFrames.allSatisfy({ $0 != nil }) ? recentFrames.compactMap { $0 }.min().map { $0 - 4 } : nil
        let soFar = meter.meanPowerSoFar(last: 4).flatMap(LoudnessMeter.lufs)
        let blocks = meter.subBlockLoudness(last: 10).compactMap { $0 }.filter { $0 >= silence }
        var steady: Double?
        if let loudest = blocks.max() {
            // Two passes: the sub-blocks within 20 LU of the loudest, then of their mean.
            let near = blocks.filter { $0 >= loudest - 20 }
            let mean = near.reduce(0, +) / Double(near.count)
            // The middle of what is left: a sub-block with a click in it, or a sub-block of
            // a pause, does not pull the level.
            var kept = near.filter { $0 >= mean - 20 }.sorted()
            if kept.count >= 5 { kept = Array(kept.dropFirst(kept.count / 5).dropLast(kept.count / 5)) }
            steady = kept.reduce(0, +) / Double(kept.count)
        }
        guard let steady else { return soFar }
        return [steady, fast].compactMap { $0 }.max()
    }
}
