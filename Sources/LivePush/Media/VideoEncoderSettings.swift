import CFFmpeg

/// What the video encoder is opened with, resolved from a source stream and the options.
struct VideoEncoderSettings: Sendable, Equatable {
    var codec: VideoCodec = .h264
    var width: Int
    var height: Int
    /// Output frames per second.
    var frameRate: Double
    var gopFrames: Int
    var preset: String
    /// Bit/s: where adaptive bitrate returns to, never goes under, and starts at.
    var targetBitrate: Int
    var minBitrate: Int
    var initialBitrate: Int
    /// Slice threads (lowest latency) instead of frame threads (faster); see ``VideoEncoder``.
    var sliceThreads: Bool
    /// H.264 Constrained Baseline (a WHIP output's encode): checked on the SPS the encoder writes.
    var constrainedBaseline = false
    /// Keyframes only every ``gopFrames`` pictures and where asked, never at a scene cut: a
    /// ladder's variants, encoded from the same pictures, then have them at the same ones.
    var fixedGOP = false
    /// Network changes move the bitrate (``MediaSourceOptions/adaptiveBitrate``): a playout
    /// channel's format keeps it fixed.
    var adaptiveBitrate = true

    init(stream: DemuxedStream, options: MediaSourceOptions) throws(LivePushError) {
        guard stream.width >= 2 || options.outputSize != nil, stream.height >= 2 || options.outputSize != nil else {
            throw LivePushError(.transcodeFailed, "video size of \(stream.codecName) stream unknown")
        }
        try self.init(width: stream.width, height: stream.height, frameRate: stream.frameRate, options: options)
    }

    /// For pictures of `width` x `height` at about `frameRate` (an app's frames, a decoded stream).
    init(width sourceWidth: Int, height sourceHeight: Int, frameRate sourceFrameRate: Double,
         options: MediaSourceOptions) throws(LivePushError) {
        let size = options.outputSize ?? VideoSize(width: sourceWidth, height: sourceHeight)
        guard size.width >= 2, size.height >= 2 else {
            throw LivePushError(.transcodeFailed, "video size \(size.width)x\(size.height) is too small")
        }
        width = size.width & ~1
        height = size.height & ~1
        let sourceRate = sourceFrameRate > 0 && sourceFrameRate <= 240 ? sourceFrameRate : 25
        frameRate = options.frameRate.map { min(max($0, 1), 240) } ?? sourceRate
        gopFrames = max(1, Int((options.gopSeconds * frameRate).rounded()))
        preset = options.preset
        targetBitrate = options.resolvedVideoBitrate(width: width, height: height)
        minBitrate = min(targetBitrate, options.minVideoBitrateKbps.map { $0 * 1000 } ?? targetBitrate / 4)
        sliceThreads = options.lowestLatencyEncoding
        if case .encode(let codec) = options.videoCodec { self.codec = codec }
        initialBitrate = min(max(options.initialVideoBitrateKbps.map { $0 * 1000 } ?? targetBitrate, minBitrate), targetBitrate)
        adaptiveBitrate = options.adaptiveBitrate
    }

    /// Duration of one output frame, microseconds.
    var frameDuration: Int64 { Int64((1_000_000 / frameRate).rounded()) }
}
