/// The push's loudness stage, after the mixer and before the AAC encoder (``AudioAACEncoder``
/// calls it on each 1024-sample frame the mixer made): the thin driver of a
/// ``LoudnessNormalizer`` over ``AudioFrame``s.
///
/// The normaliser's limiter holds one frame (its look-ahead), so each frame goes out when the
/// next one came, with its own timestamp: the look-ahead delays the sound's packets by one AAC
/// frame (21.3 ms at 48 kHz) in wall time, never on the timeline, so the pictures stay in sync
/// without being delayed. The end of the sound (``flush()``) lets the held frame out.
/// Owned by the producer, like the encode stage that owns it; it outlives the encoders that
/// stage opens and closes between inputs, so its meters cover the whole push.
final class LoudnessStage {
    private var normalizer: LoudnessNormalizer
    private let figures: LoudnessFigures
    /// The frame the normaliser holds, with its pts (samples).
    private var held: (frame: AudioFrame, pts: Int64)?
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

    /// Takes the next mixed frame (pts in samples); returns the frame before it, normalised,
    /// with its pts (nil for the first).
    func process(_ frame: AudioFrame, pts: Int64) throws(LivePushError) -> (frame: AudioFrame, pts: Int64)? {
        guard frame.channels == planes.count else {
            throw LivePushError(.transcodeFailed, "loudness stage: \(frame.channels) channels, expected \(planes.count)")
        }
        for c in 0..<planes.count {
            frame.withChannel(c) { planes[c] = Array($0) }
        }
        let previous = held
        held = (frame, pts)
        guard let out = normalizer.process(planes) else { return nil }
        return try emit(out, into: previous)
    }

    /// The end of the sound: the frame still held, normalised.
    func flush() throws(LivePushError) -> (frame: AudioFrame, pts: Int64)? {
        let previous = held
        held = nil
        guard let out = normalizer.flush() else { return nil }
        return try emit(out, into: previous)
    }

    private func emit(_ samples: [[Float]], into previous: (frame: AudioFrame, pts: Int64)?) throws(LivePushError) -> (frame: AudioFrame, pts: Int64)? {
        guard let previous else { return nil }
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
