#if canImport(Glibc)
import Glibc
#endif

/// Keeps a mix under full scale without the harsh artefacts of clipping: a peak limiter
/// with instant attack and a smooth ~80 ms release.
///
/// The gain follows the loudest channel, so stereo images do not wander; below the ceiling
/// and with the gain recovered, a frame passes through untouched (bit-exact).
struct AudioLimiter: Sendable {
    /// Peak level the output never exceeds (about -0.2 dBFS).
    static let ceiling: Float = 0.977
    /// Current gain (1 = no reduction).
    private(set) var gain: Float = 1
    /// Per-sample step of the release towards gain 1.
    private var release: Float = 0
    private var sampleRate = 0
    private var peaks: [Float] = []

    init() {}

    mutating func process(_ frame: inout AudioFrame) throws(LivePushError) {
        let n = frame.sampleCount
        guard n > 0 else { return }
        if frame.sampleRate != sampleRate {
            sampleRate = frame.sampleRate
            // exp(-1 / (0.08 s * rate)): one time constant per 80 ms.
            release = 1 - expf(-1 / (0.08 * Float(max(1, sampleRate))))
        }
        if peaks.count < n { peaks = [Float](repeating: 0, count: n) }
        var loudest: Float = 0
        peaks.withUnsafeMutableBufferPointer { peak in
            for i in 0..<n { peak[i] = 0 }
            for c in 0..<frame.channels {
                frame.withChannel(c) { samples in
                    for i in 0..<n {
                        let a = abs(samples[i])
                        if a > peak[i] { peak[i] = a }
                    }
                }
            }
            for i in 0..<n where peak[i] > loudest { loudest = peak[i] }
        }
        if loudest <= Self.ceiling && gain >= 1 { return }
        // The gain per sample: drop at once to what keeps the peak at the ceiling, then
        // recover exponentially. Stored in `peaks` to apply to every channel.
        var g = gain
        peaks.withUnsafeMutableBufferPointer { peak in
            for i in 0..<n {
                g += (1 - g) * release
                let needed = peak[i] > Self.ceiling ? Self.ceiling / peak[i] : 1
                if needed < g { g = needed }
                peak[i] = g
            }
        }
        gain = g >= 0.999 ? 1 : g  // -0.009 dB: recovered
        for c in 0..<frame.channels {
            try Self.mutate(&frame, c) { samples in
                peaks.withUnsafeBufferPointer { gains in
                    for i in 0..<n { samples[i] *= gains[i] }
                }
            }
        }
    }

    /// `withMutableChannel` with the error typed: it can only fail to allocate a private copy.
    static func mutate(_ frame: inout AudioFrame, _ channel: Int, _ body: (UnsafeMutableBufferPointer<Float>) -> Void) throws(LivePushError) {
        do {
            try frame.withMutableChannel(channel, body)
        } catch let error as LivePushError {
            throw error
        } catch {
            throw LivePushError(.outOfMemory, "audio frame copy: \(error)")
        }
    }
}
