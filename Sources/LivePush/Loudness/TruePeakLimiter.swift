#if canImport(Glibc)
import Glibc  // the math (log10, pow, exp, tan): full Foundation would link ICU, +6 MiB of RSS in every process
#endif

/// A look-ahead limiter that holds the true peak (4× oversampled, ``TruePeakInterpolator``)
/// under a ceiling. It holds one frame: each frame goes out when the next one came, so every
/// sample's gain is decided knowing what follows it (the look-ahead is one AAC frame, 1024
/// samples: 21.3 ms at 48 kHz, 23.2 ms at 44.1 kHz). The frame keeps its own timestamps: the
/// stage that drives this hands it on one frame later, which only delays its packets.
///
/// Per sample: the gain the sample needs (ceiling over its sample and interpolated peaks), the
/// least of that over the next `attack` samples, then averaged over `attack` samples: a linear
/// fade down that reaches the needed gain at the peak, never a step (a step is a click). The
/// gain recovers with a 150 ms time constant. The gain is the same on every channel, so the
/// stereo image does not move.
struct TruePeakLimiter: Sendable {
    let channels: Int
    let ceiling: Double
    /// Samples of fade before a peak (5 ms).
    let attack: Int
    private let release: Double
    private var interpolators: [TruePeakInterpolator]
    /// The frame held back (planar), and the gain each of its samples and of the next frame's
    /// needs (filled as the next frame is read: interpolated peaks land a few samples back).
    private var held: [[Float]]?
    private var needed: [Double] = []
    /// Whether a frame went out (before it, ``minimaTail`` is the first samples' own).
    private var started = false
    /// The last `attack` values of the window minimum before the held frame.
    private var minimaTail: [Double]
    private var gain = 1.0
    /// Scratch: each sample's peaks (all channels), and one channel's interpolated peaks.
    private var samplePeaks: [Double] = []
    private var truePeaks: [Double] = []
    private var channelPeaks: [Double] = []
    /// The lowest gain applied since the last call of ``takeLowestGain()``.
    private var lowest = 1.0

    init(sampleRate: Int, channels: Int, ceiling: Double) {
        self.channels = channels
        self.ceiling = ceiling
        attack = max(1, sampleRate / 200)
        release = 1 - exp(-1 / (0.06 * Double(max(sampleRate, 1))))
        interpolators = (0..<channels).map { _ in TruePeakInterpolator() }
        minimaTail = [Double](repeating: 1, count: attack)
    }

    /// Takes the next frame; returns the one held before it, limited (nil for the first).
    mutating func process(_ frame: [[Float]]) -> [[Float]]? {
        let count = frame.first?.count ?? 0
        let heldCount = held?.first?.count ?? 0
        needed.append(contentsOf: repeatElement(1, count: count))
        if truePeaks.count < count { truePeaks = [Double](repeating: 0, count: count) }
        if samplePeaks.count < count { samplePeaks = [Double](repeating: 0, count: count) }
        for i in 0..<count { samplePeaks[i] = 0 }
        for c in 0..<channels {
            frame[c].withUnsafeBufferPointer { plane in
                interpolators[c].peaks(of: plane, into: &channelPeaks)
                for i in 0..<count {
                    samplePeaks[i] = max(samplePeaks[i], abs(Double(plane[i])))
                    truePeaks[i] = c == 0 ? channelPeaks[i] : max(truePeaks[i], channelPeaks[i])
                }
            }
        }
        for i in 0..<count {
            let at = heldCount + i
            if samplePeaks[i] > ceiling { needed[at] = min(needed[at], ceiling / samplePeaks[i]) }
            if truePeaks[i] > ceiling {
                // The interpolated points lie between `delay` and `delay - 1` samples back.
                for back in (TruePeakInterpolator.delay - 1)...TruePeakInterpolator.delay where at - back >= 0 {
                    needed[at - back] = min(needed[at - back], ceiling / truePeaks[i])
                }
            }
        }
        defer { held = count > 0 ? frame : nil }
        guard var out = held else {
            return nil
        }
        apply(to: &out, count: heldCount)
        needed.removeFirst(heldCount)
        return out
    }

    /// The end: the frame still held, limited (nothing follows it).
    mutating func flush() -> [[Float]]? {
        process([[Float]](repeating: [], count: channels))
    }

    /// The lowest gain applied since the last call (1: no limiting), for the figures.
    mutating func takeLowestGain() -> Double {
        defer { lowest = 1 }
        return lowest
    }

    private mutating func apply(to out: inout [[Float]], count: Int) {
        // minima[k] for k in -attack ..< count: the least needed gain over [k, k + attack].
        // Before the first frame there is no sound, but its window reaches into the first
        // samples: a stream that starts over the ceiling is faded from its first sample.
        if !started {
            started = true
            var least = 1.0
            for k in 0..<attack {
                least = min(least, k < needed.count ? needed[k] : 1)
                minimaTail[k] = least
            }
        }
        var minima = minimaTail
        minima.reserveCapacity(attack + count)
        var window: [Int] = []  // indices into `needed`, increasing values (a monotonic queue)
        window.reserveCapacity(attack + 1)
        var head = 0
        let available = needed.count
        func need(_ j: Int) -> Double { j < available ? needed[j] : 1 }
        var next = 0
        for k in 0..<count {
            while next <= k + attack {
                let value = need(next)
                while window.count > head, need(window[window.count - 1]) >= value { window.removeLast() }
                window.append(next)
                next += 1
            }
            while window[head] < k { head += 1 }
            minima.append(need(window[head]))
        }
        // The average of the minima over [i - attack, i] fades the gain down to each peak.
        var sum = minima[0...attack].reduce(0, +)
        var gains = [Double](repeating: 1, count: count)
        let width = Double(attack + 1)
        for i in 0..<count {
            if i > 0 { sum += minima[i + attack] - minima[i - 1] }
            let faded = sum / width
            gain = min(faded, gain + (1 - gain) * release)
            gains[i] = gain
            lowest = min(lowest, gain)
        }
        minimaTail = Array(minima.suffix(attack))
        if gains.allSatisfy({ $0 >= 1 }) { return }
        for c in 0..<channels {
            for i in 0..<count { out[c][i] = Float(Double(out[c][i]) * gains[i]) }
        }
    }
}
