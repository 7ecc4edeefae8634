import CFFmpeg

/// Raw sound of one format made into another (``FFResampler`` over ``AudioFrame``s): the
/// push's encode after the clock takes one format (``AudioEncodeStage``), and an input that
/// goes on air with another (a slate, a fill, an app's frames) is converted there. The
/// resampler's delay line runs on from block to block, so a steady stream comes out whole.
final class AudioFrameResampler {
    let format: AudioFormat
    private let resampler: FFResampler

    init(format: AudioFormat) throws(LivePushError) {
        self.format = format
        resampler = try FFResampler(format: format, failure: .transcodeFailed)
    }

    /// `frame` in ``format``, stamped at its own time; nil while the resampler only filled its
    /// delay line.
    func convert(_ frame: AudioFrame) throws(LivePushError) -> AudioFrame? {
        var blocks: [AudioFrame] = []
        let channels = format.channels, rate = format.sampleRate
        try resampler.convert(frame.storage.frame) { planes, count throws(LivePushError) in
            var block = try AudioFrame(sampleRate: rate, channels: channels, sampleCount: Int(count), timestamp: frame.timestamp)
            let raw = UnsafeMutableRawPointer(planes).assumingMemoryBound(to: UnsafePointer<Float>?.self)
            try block.replaceSamples(at: 0, fromPlanes: (0..<channels).map { raw[$0]! }, count: Int(count))
            blocks.append(block)
        }
        return blocks.first
    }
}
