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

    /// The last 12 input samples, twice over (a ring read without wrapping).
    private var history = [Double](repeating: 0, count: 2 * taps)
    private var position = 0

    init() {}

    /// Takes one sample; returns the largest magnitude of the four points it completes.
    @inline(__always)
    mutating func callAsFunction(_ x: Double) -> Double {
        position = position == 0 ? Self.taps - 1 : position - 1
        history[position] = x
        history[position + Self.taps] = x
        var peak = 0.0
        history.withUnsafeBufferPointer { h in
            Self.phases.withUnsafeBufferPointer { phases in
                for p in 0..<4 {
                    var sum = 0.0
                    phases[p].withUnsafeBufferPointer { c in
                        // history[position + k] is x[n - k].
                        for k in 0..<Self.taps { sum += c[k] * h[position + k] }
                    }
                    peak = max(peak, abs(sum))
                }
            }
        }
        return peak
    }
}
