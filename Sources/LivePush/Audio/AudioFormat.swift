/// The sample layout mixing works in: planar 32-bit float at the push's rate and channel
/// count (what the AAC encoder takes), so BGM and effects are converted once, when decoded.
struct AudioFormat: Sendable, Equatable, CustomStringConvertible {
    var sampleRate: Int
    var channels: Int

    /// Samples in `micros` microseconds, rounded down.
    func samples(inMicros micros: Int64) -> Int {
        Int(micros * Int64(sampleRate) / 1_000_000)
    }

    /// Microseconds of `samples` samples, rounded down.
    func micros(ofSamples samples: Int64) -> Int64 {
        sampleRate > 0 ? samples * 1_000_000 / Int64(sampleRate) : 0
    }

    var description: String { "\(sampleRate) Hz, \(channels) ch" }
}
