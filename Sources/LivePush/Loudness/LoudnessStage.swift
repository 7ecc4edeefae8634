/// The push's loudness stage, after the mixer and before the AAC encoder (``AudioAACEncoder``
/// calls it on each 1024-sample frame the mixer made): the thin driver of a
/// ``LoudnessNormalizer`` over ``AudioFrame``s.
///
/// The normaliser holds two frames (its look-ahead), so each frame goes out when the second
/// after it came, with its own timestamp: the look-ahead delays the sound's packets by two AAC
/// frames (42.7 ms at 48 kHz, 46.4 ms at 44.1 kHz) in wall time, never on the timeline, so the
/// pictures stay in sync without being delayed. The end of the sound (``flush()``) lets the
/// held frames out.
/// Owned by the producer, like the encode stage that owns it; it outlives the encoders that
/// stage opens and closes between inputs, so its meters cover the whole push.
final class LoudnessStage {
    private var normalizer: LoudnessNormalizer
    private let figures: LoudnessFigures
    /// The frames the normaliser holds (at most two), with their pts (samples), oldest first.
    private var held: [(frame: AudioFrame, pts: Int64)] = []
    private var planes: [[Float]]
    private var framesSinceFigures = 0

    init(target: LoudnessTarget, format: AudioFormat, figures: LoudnessFigures) {
        normalizer = LoudnessNormalizer(target: target, sampleRate: format.sampleRate, channels: format.channels)
        self.figures = figures
        planes = [[Float]](repeating: [], count: format.channels)
        var empty = LoudnessStats()
        empty.target = target.integrated
        figures.set(empty)
    }

    /// Takes the next mixed frame (pts in samples); returns the frame two before it, normalised,
    /// with its pts (nil for the first two).
    func process(_ frame: AudioFrame, pts: Int64) throws(LivePushError) -> (frame: AudioFrame, pts: Int64)? {
        guard frame.channels == planes.count else {
            throw LivePushError(.transcodeFailed, "loudness stage: \(frame.channels) channels, expected \(planes.count)")
        }
        for c in 0..<planes.count {
            frame.withChannel(c) { planes[c] = Array($0) }
        }
        held.append((frame, pts))
        guard let out = normalizer.process(planes), !held.isEmpty else { return nil }
        return try emit(out, into: held.removeFirst())
    }

    /// The end of the sound: the frames still held, normalised, oldest first.
    func flush() throws(LivePushError) -> [(frame: AudioFrame, pts: Int64)] {
        var out: [(frame: AudioFrame, pts: Int64)] = []
        for samples in normalizer.flush() where !held.isEmpty {
            out.append(try emit(samples, into: held.removeFirst()))
        }
        held.removeAll()
        figures.set(normalizer.stats)
        return out
    }

    private func emit(_ samples: [[Float]], into previous: (frame: AudioFrame, pts: Int64)) throws(LivePushError) -> (frame: AudioFrame, pts: Int64) {
        var frame = previous.frame
        for c in 0..<samples.count {
            try AudioLimiter.mutate(&frame, c) { target in
                samples[c].withUnsafeBufferPointer { source in
                    for i in 0..<min(target.count, source.count) { target[i] = source[i] }
                }
            }
        }
        framesSinceFigures += 1
        if framesSinceFigures >= 5 {  // about every 100 ms
            framesSinceFigures = 0
            figures.set(normalizer.stats)
        }
        return (frame, previous.pts)
    }
}
