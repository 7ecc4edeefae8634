#if canImport(Glibc)
import Glibc  // the math (log10, pow, exp, tan): full Foundation would link ICU, +6 MiB of RSS in every process
#endif

/// An ITU-R BS.1770-4 / EBU R128 loudness meter over planar float sound: momentary (400 ms),
/// short-term (3 s) and gated integrated loudness, in LUFS.
///
/// The K-weighted power is summed per 100 ms sub-block, counted in samples (4800 at 48 kHz),
/// so the windows are exact whatever size the frames come in; the gating blocks of the
/// integrated loudness are the 400 ms windows every 100 ms (75 % overlap), as the
/// Recommendation has them. Memory is bounded for a channel that runs for months: the
/// integrated loudness keeps a histogram of block loudness (0.1 LU bins from -70 to +10 LUFS,
/// each with its count and its power), not the blocks, as libebur128 does; the gate lands on a
/// bin's edge, which moves the result by less than 0.01 LU on programme material.
struct LoudnessMeter: Sendable {
    static let absoluteGate = -70.0
    static let binWidth = 0.1
    static let binCount = 800

    let sampleRate: Int
    let channels: Int
    let subBlockSize: Int
    private var filters: [KWeightingFilter]
    /// Power of the sub-block being summed (channels added), and its samples so far.
    private var partialPower = 0.0
    private var partialCount = 0
    /// The last 30 complete sub-blocks' mean power, oldest first once full (a ring).
    private var recent = [Double](repeating: 0, count: 30)
    private var recentNext = 0
    private(set) var subBlocks = 0
    private var binCounts = [Int](repeating: 0, count: binCount)
    private var binPower = [Double](repeating: 0, count: binCount)

    init(sampleRate: Int, channels: Int) {
        self.sampleRate = sampleRate
        self.channels = channels
        subBlockSize = max(1, sampleRate / 10)
        filters = (0..<channels).map { _ in KWeightingFilter(sampleRate: sampleRate) }
    }

    /// Loudness of a mean K-weighted power (nil for silence).
    static func lufs(_ power: Double) -> Double? {
        power > 1e-20 ? -0.691 + 10 * log10(power) : nil
    }

    /// Measures `count` samples of each plane; returns the mean K-weighted power (channels
    /// added) of each of `parts` equal parts of them, what the gain controller's fastest term
    /// reads (a click lands in one part).
    @discardableResult
    mutating func measure(_ planes: [UnsafeBufferPointer<Float>], count: Int, parts: Int = 1) -> [Double] {
        guard count > 0, planes.count == channels, parts > 0 else { return [] }
        var powers = [Double](repeating: 0, count: parts)
        let partSize = max(1, (count + parts - 1) / parts)
        var start = 0
        while start < count {
            // A run ends at a sub-block's end or a part's end, whichever is first.
            let run = min(count - start, subBlockSize - partialCount, partSize - start % partSize)
            var power = 0.0
            for c in 0..<channels {
                let plane = planes[c]
                var filter = filters[c]  // a local copy: no uniqueness check per sample
                var sum = 0.0
                for i in start..<(start + run) {
                    let y = filter(Double(plane[i]))
                    sum += y * y
                }
                filters[c] = filter
                power += sum
            }
            partialPower += power
            partialCount += run
            powers[min(parts - 1, start / partSize)] += power
            start += run
            if partialCount == subBlockSize { completeSubBlock() }
        }
        for p in 0..<parts {
            let size = min(partSize, max(0, count - p * partSize))
            powers[p] = size > 0 ? powers[p] / Double(size) : 0
        }
        return powers
    }

    private mutating func completeSubBlock() {
        recent[recentNext] = partialPower / Double(subBlockSize)
        recentNext = (recentNext + 1) % recent.count
        subBlocks += 1
        partialPower = 0
        partialCount = 0
        guard subBlocks >= 4, let block = meanPower(last: 4) else { return }
        guard let loudness = Self.lufs(block), loudness >= Self.absoluteGate else { return }
        let bin = min(Self.binCount - 1, Int((loudness - Self.absoluteGate) / Self.binWidth))
        binCounts[bin] += 1
        binPower[bin] += block
    }

    /// Mean power of the last `n` complete sub-blocks (fewer at the start; nil before the first).
    func meanPower(last n: Int) -> Double? {
        let available = min(n, subBlocks, recent.count)
        guard available > 0 else { return nil }
        var sum = 0.0
        for back in 1...available { sum += recent[(recentNext - back + recent.count) % recent.count] }
        return sum / Double(available)
    }

    /// The mean power of the last `n` complete sub-blocks and the sub-block being summed,
    /// weighted by their samples: a window that fills from the push's first sample.
    func meanPowerSoFar(last n: Int) -> Double? {
        let complete = min(n, subBlocks, recent.count)
        let samples = complete * subBlockSize + partialCount
        guard samples > 0 else { return nil }
        var sum = partialPower
        if complete > 0 {
            for back in 1...complete { sum += recent[(recentNext - back + recent.count) % recent.count] * Double(subBlockSize) }
        }
        return sum / Double(samples)
    }

    /// The loudness of each of the last `n` complete sub-blocks, newest first (nil: silent).
    func subBlockLoudness(last n: Int) -> [Double?] {
        let available = min(n, subBlocks, recent.count)
        return (0..<available).map { Self.lufs(recent[(recentNext - 1 - $0 + 2 * recent.count) % recent.count]) }
    }

    /// Momentary loudness (the last 400 ms); nil until 400 ms were measured, or silence.
    var momentary: Double? { subBlocks >= 4 ? meanPower(last: 4).flatMap(Self.lufs) : nil }
    /// Short-term loudness (the last 3 s); nil until 3 s were measured, or silence.
    var shortTerm: Double? { subBlocks >= 30 ? meanPower(last: 30).flatMap(Self.lufs) : nil }

    /// Gated integrated loudness since the start: the blocks above -70 LUFS, then those within
    /// 10 LU of their mean. Nil until a block passed the absolute gate.
    var integrated: Double? {
        var count = 0, power = 0.0
        for b in 0..<Self.binCount { count += binCounts[b]; power += binPower[b] }
        guard count > 0, let ungated = Self.lufs(power / Double(count)) else { return nil }
        let gate = ungated - 10
        count = 0
        power = 0
        for b in 0..<Self.binCount where Self.absoluteGate + (Double(b) + 0.5) * Self.binWidth >= gate {
            count += binCounts[b]
            power += binPower[b]
        }
        return count > 0 ? Self.lufs(power / Double(count)) : nil
    }
}
