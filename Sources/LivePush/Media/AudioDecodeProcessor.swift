import CFFmpeg

/// Decodes any audio libavcodec can decode and resamples it to planar float at 44.1 or 48 kHz
/// (mono stays mono, everything else becomes stereo), yielding it as raw sound
/// (``MediaPacket/rawSound(_:)``): the push mixes its music into it and encodes it once, after
/// the clock (``AudioEncodeStage``). Stamped by sample count from the first decoded frame on,
/// as the encoder it fed used to stamp its frames, so a stream's jittery timestamps make no gaps.
final class AudioDecodeProcessor: AudioPacketProcessor {
    let streamIndex: Int32
    let kind = MediaPacket.Kind.audio
    private let stream: DemuxedStream
    private let decoder: FFDecoder
    private let format: AudioFormat
    private let bitrate: Int
    private let resampler: FFResampler
    /// Decoded frames that end before this (µs) are dropped: a clip's `in` point.
    private let startTime: Int64?
    /// The next sample's time, in samples; nil until the first kept frame.
    private var nextSample: Int64?

    init(stream: DemuxedStream, demuxer: FFDemuxer, options: MediaSourceOptions) throws(LivePushError) {
        guard let parameters = demuxer.codecParameters(of: stream.index) else {
            throw LivePushError(.noUsableStream, "audio stream \(stream.index)")
        }
        self.stream = stream
        streamIndex = stream.index
        decoder = try FFDecoder(parameters: parameters, timeBase: stream.timeBase)
        let src = stream.sampleRate
        let rate = options.audioSampleRate ?? ((src == 44100 || src == 22050 || src == 11025 || src <= 0) ? 44100 : 48000)
        format = AudioFormat(sampleRate: rate, channels: options.audioSampleRate != nil || stream.channels != 1 ? 2 : 1)
        bitrate = options.resolvedAudioBitrate(channels: format.channels)
        startTime = options.startTime
        resampler = try FFResampler(format: format, failure: .transcodeFailed)
    }

    var isConfigured: Bool { true }

    var trackInfo: AudioTrackInfo? { .rawSound(format, bitrate: bitrate) }

    func process(_ packet: UnsafeMutablePointer<AVPacket>, into out: inout [MediaPacket]) throws(LivePushError) {
        try decoder.send(packet)
        while try decoder.receive() {
            try resample(decoder.frame, into: &out)
        }
    }

    func finish(into out: inout [MediaPacket]) throws(LivePushError) {
        try decoder.send(nil)
        while try decoder.receive() {
            try resample(decoder.frame, into: &out)
        }
        try resample(nil, into: &out)  // the resampler's delayed samples
    }

    func reset() throws(LivePushError) {
        decoder.flush()
        resampler.reset()
        nextSample = nil
    }

    /// Converts a decoded frame (nil = flush) into raw sound.
    private func resample(_ frame: UnsafeMutablePointer<AVFrame>?, into out: inout [MediaPacket]) throws(LivePushError) {
        if let frame, nextSample == nil {
            let ts = frame.pointee.best_effort_timestamp != FF.noPTS ? frame.pointee.best_effort_timestamp : frame.pointee.pts
            let length = av_rescale_q(Int64(frame.pointee.nb_samples), AVRational(num: 1, den: max(1, frame.pointee.sample_rate)),
                                      stream.timeBase)
            if let start = startTime, ts != FF.noPTS, let end = FF.micros(ts + length, stream.timeBase), end <= start { return }
            nextSample = ts == FF.noPTS ? 0 : av_rescale_q(ts, stream.timeBase, AVRational(num: 1, den: Int32(format.sampleRate)))
        }
        guard nextSample != nil else { return }
        let format = format
        try resampler.convert(frame) { planes, count throws(LivePushError) in
            let first = nextSample ?? 0
            var sound = try AudioFrame(sampleRate: format.sampleRate, channels: format.channels, sampleCount: Int(count),
                                       timestamp: format.micros(ofSamples: first))
            let raw = UnsafeMutableRawPointer(planes).assumingMemoryBound(to: UnsafePointer<Float>?.self)
            try sound.replaceSamples(at: 0, fromPlanes: (0..<format.channels).map { raw[$0]! }, count: Int(count))
            nextSample = first + Int64(count)
            out.append(.rawSound(sound))
        }
    }
}
