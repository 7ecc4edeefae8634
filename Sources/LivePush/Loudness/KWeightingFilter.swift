#if canImport(Glibc)
import Glibc  // the math (log10, pow, exp, tan): full Foundation would link ICU, +6 MiB of RSS in every process
#endif

/// ITU-R BS.1770-4's K-weighting for one channel: the shelving pre-filter (head effects,
/// +4 dB above ~1.7 kHz) then the RLB high-pass (~38 Hz). The coefficients are derived from
/// the analogue prototypes for any sample rate, so 44.1 kHz reads like 48 kHz (the table in
/// the Recommendation is for 48 kHz only); at 48 kHz they equal that table.
struct KWeightingFilter: Sendable {
    private var shelf: Biquad
    private var highPass: Biquad

    init(sampleRate: Int) {
        let rate = Double(max(sampleRate, 8000))
        // Pre-filter (high shelf).
        var f0 = 1681.974450955533, q = 0.7071752369554196
        let gainDB = 3.999843853973347
        var k = tan(Double.pi * f0 / rate)
        let vh = pow(10, gainDB / 20), vb = pow(vh, 0.4996667741545416)
        var a0 = 1 + k / q + k * k
        shelf = Biquad(b0: (vh + vb * k / q + k * k) / a0, b1: 2 * (k * k - vh) / a0, b2: (vh - vb * k / q + k * k) / a0,
                       a1: 2 * (k * k - 1) / a0, a2: (1 - k / q + k * k) / a0)
        // RLB weighting (high-pass); its numerator is [1, -2, 1] as in the Recommendation.
        f0 = 38.13547087602444
        q = 0.5003270373238773
        k = tan(Double.pi * f0 / rate)
        a0 = 1 + k / q + k * k
        highPass = Biquad(b0: 1, b1: -2, b2: 1, a1: 2 * (k * k - 1) / a0, a2: (1 - k / q + k * k) / a0)
    }

    /// Filters one sample.
    @inline(__always)
    mutating func callAsFunction(_ x: Double) -> Double {
        highPass(shelf(x))
    }
}
