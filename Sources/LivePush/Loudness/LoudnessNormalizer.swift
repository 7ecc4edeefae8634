import Foundation

/// The loudness stage's logic, on planar float frames: measures the input (``LoudnessMeter``),
/// decides a gain (``LoudnessGainController``) ramped across each frame, holds the true peak
/// under the ceiling (``TruePeakLimiter``, one frame of look-ahead), and measures what goes
/// out (a second meter, and the true peak with its own interpolators).
///
/// The limiter aims `codecHeadroom` under the ceiling asked for: AAC coding moves peaks (the
/// decoded sound's true peak is up to about 1 dB over the coded input's on loud material), and
/// the ceiling is a promise about what is received.
struct LoudnessNormalizer: Sendable {
    static let codecHeadroom = 1.5

    let target: LoudnessTarget
    let sampleRate: Int
    let channels: Int
    private var input: LoudnessMeter
    private var output: LoudnessMeter
    private var controller: LoudnessGainController
    private var limiter: TruePeakLimiter
    private var outputPeaks: [TruePeakInterpolator]
    private var linearGain = 1.0
    private var maxTruePeak = 0.0
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

    /// Takes the next frame (planar, `channels` planes of equal length); returns the frame
    /// before it, normalised (nil for the first: the limiter holds one frame).
    mutating func process(_ frame: [[Float]]) -> [[Float]]? {
        var frame = frame
        let count = frame.first?.count ?? 0
        guard count > 0, frame.count == channels else { return nil }
        let power = frame.withUnsafeBufferPointers { input.measure($0, count: count) }
        let seconds = Double(count) / Double(sampleRate)
        // The output's integrated loudness for the trim: once a second (it walks the
        // histogram), from 5 s on (before, it is mostly the start's guess).
        var integrated: Double?
        if output.subBlocks >= 50, output.subBlocks >= trimmedAt + 10 {
            integrated = output.integrated
            trimmedAt = output.subBlocks
        }
        let gainDB = controller.next(input: input, framePower: power, seconds: seconds, outputIntegrated: integrated, sinceTrim: 1)
        let wanted = pow(10, gainDB / 20)
        // A ramp across the frame from the last gain: a gain step is a click.
        let from = linearGain, step = (wanted - from) / Double(count)
        for c in 0..<channels {
            frame[c].withUnsafeMutableBufferPointer { samples in
                for i in 0..<count { samples[i] = Float(Double(samples[i]) * (from + step * Double(i + 1))) }
            }
        }
        linearGain = wanted
        return limiter.process(frame).map { measureOutput($0) }
    }

    /// The end: the frame the limiter still holds.
    mutating func flush() -> [[Float]]? {
        limiter.flush().map { measureOutput($0) }
    }

    private mutating func measureOutput(_ frame: [[Float]]) -> [[Float]] {
        let count = frame.first?.count ?? 0
        frame.withUnsafeBufferPointers { _ = output.measure($0, count: count) }
        for c in 0..<channels {
            for x in frame[c] { maxTruePeak = max(maxTruePeak, abs(Double(x)), outputPeaks[c](Double(x))) }
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

extension Array where Element == [Float] {
    /// Every plane's buffer at once, for the meters.
    func withUnsafeBufferPointers<R>(_ body: ([UnsafeBufferPointer<Float>]) -> R) -> R {
        var pointers: [UnsafeBufferPointer<Float>] = []
        func nest(_ index: Int) -> R {
            guard index < count else { return body(pointers) }
            return self[index].withUnsafeBufferPointer { buffer in
                pointers.append(buffer)
                return nest(index + 1)
            }
        }
        return nest(0)
    }
}
