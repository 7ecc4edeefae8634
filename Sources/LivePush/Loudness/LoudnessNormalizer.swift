#if canImport(Glibc)
import Glibc  // the math (log10, pow, exp, tan): full Foundation would link ICU, +6 MiB of RSS in every process
#endif

/// The loudness stage's logic, on planar float frames: measures the input (``LoudnessMeter``),
/// decides a gain (``LoudnessGainController``), holds the true peak under the ceiling
/// (``TruePeakLimiter``), and measures what goes out (a second meter, and the true peak with
/// its own interpolators).
///
/// Look-ahead: two frames (2048 samples: 42.7 ms at 48 kHz, 46.4 ms at 44.1 kHz). The gain
/// decided on a frame is reached at that frame's start: it is ramped across the frame held
/// before it, so a step up in the sound is met by a fade down that ends where it begins. Then
/// the limiter holds that frame one more (its own look-ahead).
///
/// The limiter aims `codecHeadroom` (2 dB) under the ceiling asked for: AAC coding moves
/// peaks, most where the limiter works hardest (a click on a raised quiet source came back from
/// the decoder 1.4 dB over what went in, at 128 kbit/s), and the ceiling is a promise about
/// what is received, as EBU R128 s1 asks of lossy delivery.
struct LoudnessNormalizer: Sendable {
    static let codecHeadroom = 2.0

    let target: LoudnessTarget
    let sampleRate: Int
    let channels: Int
    private var input: LoudnessMeter
    private var output: LoudnessMeter
    private var controller: LoudnessGainController
    private var limiter: TruePeakLimiter
    private var outputPeaks: [TruePeakInterpolator]
    private var linearGain = 1.0
    /// The frame that waits for the next one's gain (its ramp ends at that gain).
    private var held: [[Float]]?
    private var maxTruePeak = 0.0
    private var scratch: [Double] = []
    /// The output's sub-blocks at the last trim.
    private var trimmedAt = 0

    init(target: LoudnessTarget, sampleRate: Int, channels: Int) {
        self.target = target
        self.sampleRate = sampleRate
        self.channels = channels
        input = LoudnessMeter(sampleRate: sampleRate, channels: channels)
        output = LoudnessMeter(sampleRate: sampleRate, channels: channels)
        controller = LoudnessGainController(target: target.integrated)
        limiter = TruePeakLimiter(sampleRate: sampleRate, channels: channels,
                                  ceiling: pow(10, (target.truePeak - Self.codecHeadroom) / 20))
        outputPeaks = (0..<channels).map { _ in TruePeakInterpolator() }
    }

    /// Takes the next frame (planar, `channels` planes of equal length); returns the frame two
    /// before it, normalised (nil for the first two: the look-ahead).
    mutating func process(_ frame: [[Float]]) -> [[Float]]? {
        let count = frame.first?.count ?? 0
        guard count > 0, frame.count == channels else { return nil }
        let parts = frame.withUnsafeBufferPointers { input.measure($0, count: count, parts: 4) }
        // The output's integrated loudness for the trim: once a second (it walks the
        // histogram), from 5 s on (before, it is mostly the start's guess).
        var integrated: Double?
        if output.subBlocks >= 50, output.subBlocks >= trimmedAt + 10 {
            integrated = output.integrated
            trimmedAt = output.subBlocks
        }
        let gainDB = controller.next(input: input, partPowers: parts, seconds: Double(count) / Double(sampleRate),
                                     outputIntegrated: integrated, sinceTrim: 1)
        let wanted = pow(10, gainDB / 20)
        defer { held = frame }
        guard let previous = held else {
            linearGain = wanted  // the first frame starts at its own gain
            return nil
        }
        return limiter.process(ramp(previous, to: wanted)).map { measureOutput($0) }
    }

    /// The end: the frames still held (up to two), oldest first.
    mutating func flush() -> [[[Float]]] {
        var out: [[[Float]]] = []
        if let previous = held, let limited = limiter.process(ramp(previous, to: linearGain)) { out.append(measureOutput(limited)) }
        held = nil
        if let last = limiter.flush() { out.append(measureOutput(last)) }
        return out
    }

    /// `frame` with a gain ramped from the last one to `wanted` (a gain step is a click).
    private mutating func ramp(_ frame: [[Float]], to wanted: Double) -> [[Float]] {
        var frame = frame
        let count = frame.first?.count ?? 0
        let from = linearGain, step = (wanted - from) / Double(max(count, 1))
        for c in 0..<channels {
            frame[c].withUnsafeMutableBufferPointer { samples in
                for i in 0..<count { samples[i] = Float(Double(samples[i]) * (from + step * Double(i + 1))) }
            }
        }
        linearGain = wanted
        return frame
    }

    private mutating func measureOutput(_ frame: [[Float]]) -> [[Float]] {
        let count = frame.first?.count ?? 0
        frame.withUnsafeBufferPointers { _ = output.measure($0, count: count) }
        for c in 0..<channels {
            frame[c].withUnsafeBufferPointer { plane in
                outputPeaks[c].peaks(of: plane, into: &scratch)
                for i in 0..<count { maxTruePeak = max(maxTruePeak, abs(Double(plane[i])), scratch[i]) }
            }
        }
        return frame
    }

    /// What was measured on the output so far.
    var stats: LoudnessStats {
        var stats = LoudnessStats()
        stats.momentary = output.momentary
        stats.shortTerm = output.shortTerm
        stats.integrated = output.integrated
        stats.truePeak = maxTruePeak > 0 ? 20 * log10(maxTruePeak) : nil
        stats.gain = 20 * log10(linearGain)
        stats.target = target.integrated
        return stats
    }
}
