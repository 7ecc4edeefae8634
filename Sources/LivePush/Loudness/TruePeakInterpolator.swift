/// ITU-R BS.1770-4 Annex 2's true-peak estimate for one channel: 4× oversampling with the
/// Recommendation's 48-tap interpolator (4 phases of 12 taps), run sample by sample.
///
/// What one input sample yields is the largest magnitude among the four interpolated points
/// it completes. They lie about ``delay`` samples back (the filter's centre), which callers
/// that act on them (the limiter) take into account.
struct TruePeakInterpolator: Sendable {
    /// Samples between an input sample and the interpolated points it completes (the filter's
    /// centre tap is the seventh of twelve).
    static let delay = 6
    static let taps = 12

    static let phases: [[Double]] = [
        [0.0017089843750, 0.0109863281250, -0.0196533203125, 0.0332031250000, -0.0594482421875, 0.1373291015625,
         0.9721679687500, -0.1022949218750, 0.0476074218750, -0.0266113281250, 0.0148925781250, -0.0083007812500],
        [-0.0291748046875, 0.0292968750000, -0.0517578125000, 0.0891113281250, -0.1665039062500, 0.4650878906250,
         0.7797851562500, -0.2003173828125, 0.1015625000000, -0.0582275390625, 0.0330810546875, -0.0189208984375],
        [-0.0189208984375, 0.0330810546875, -0.0582275390625, 0.1015625000000, -0.2003173828125, 0.7797851562500,
         0.4650878906250, -0.1665039062500, 0.0891113281250, -0.0517578125000, 0.0292968750000, -0.0291748046875],
        [-0.0083007812500, 0.0148925781250, -0.0266113281250, 0.0476074218750, -0.1022949218750, 0.9721679687500,
         0.1373291015625, -0.0594482421875, 0.0332031250000, -0.0196533203125, 0.0109863281250, 0.0017089843750],
    ]

    /// The phases' coefficients, flat (phase × taps), reversed in time within each phase so
    /// that a phase is a dot product with the samples in their order.
    private static let flat: [Double] = phases.flatMap { $0.reversed() }

    /// The last 11 input samples, oldest first, then room for a block.
    private var window = [Double](repeating: 0, count: taps - 1)

    init() {}

    /// Takes one sample; returns the largest magnitude of the four points it completes.
    mutating func callAsFunction(_ x: Double) -> Double {
        var out = [0.0]
        [Float(x)].withUnsafeBufferPointer { peaks(of: $0, into: &out) }
        return out[0]
    }

    /// Takes a block of samples; `out[i]` is the largest magnitude of the four points sample
    /// `i` completes.
    mutating func peaks(of samples: UnsafeBufferPointer<Float>, into out: inout [Double]) {
        let n = samples.count
        let history = Self.taps - 1
        if out.count < n { out = [Double](repeating: 0, count: n) }
        window.removeSubrange(history...)
        window.reserveCapacity(history + n)
        for x in samples { window.append(Double(x)) }
        window.withUnsafeBufferPointer { w in
            Self.flat.withUnsafeBufferPointer { c in
                out.withUnsafeMutableBufferPointer { o in
                    for i in 0..<n {
                        // w[i ... i + 11]: the 12 samples up to sample i, oldest first.
                        var peak = 0.0
                        for p in 0..<4 {
                            let base = p * Self.taps
                            var sum = 0.0
                            for k in 0..<Self.taps { sum += c[base + k] * w[i + k] }
                            peak = max(peak, abs(sum))
                        }
                        o[i] = peak
                    }
                }
            }
        }
        // Keep the last 11 samples for the next block.
        let keep = Array(window.suffix(history))
        window.replaceSubrange(0..<window.count, with: keep)
    }
}
