import CFFmpeg

/// Decodes any audio libavcodec can decode, resamples it to planar float at 44.1 or 48 kHz
/// (mono stays mono, everything else becomes stereo) and hands it to an ``AudioAACEncoder``,
/// which mixes in the BGM and effects of the pusher's ``AudioMixer`` and encodes AAC.
final class AudioTranscodeProcessor: AudioPacketProcessor {
    let streamIndex: Int32
    let kind = MediaPacket.Kind.audio
    private let stream: DemuxedStream
    private let decoder: FFDecoder
    private let output: AudioAACEncoder
    private var sampleRate: Int32 { Int32(output.format.sampleRate) }
    private var channels: Int32 { Int32(output.format.channels) }
    private let resampler: FFResampler
    /// Decoded frames that end before this (µs) are dropped: a clip's `in` point.
    private let startTime: Int64?

    init(stream: DemuxedStream, demuxer: FFDemuxer, options: MediaSourceOptions, mixer: AudioMixer? = nil) throws(LivePushError) {
        guard let parameters = demuxer.codecParameters(of: stream.index) else {
            throw LivePushError(.noUsableStream, "audio stream \(stream.index)")
        }
        self.stream = stream
        streamIndex = stream.index
        decoder = try FFDecoder(parameters: parameters, timeBase: stream.timeBase)
        let src = stream.sampleRate
        let rate = options.audioSampleRate ?? ((src == 44100 || src == 22050 || src == 11025 || src <= 0) ? 44100 : 48000)
        let format = AudioFormat(sampleRate: rate, channels: options.audioSampleRate != nil || stream.channels != 1 ? 2 : 1)
        startTime = options.startTime
        resampler = try FFResampler(format: format, failure: .transcodeFailed)
        output = try AudioAACEncoder(format: format, bitrate: options.resolvedAudioBitrate(channels: format.channels), mixer: mixer)
    }

    var isConfigured: Bool { true }

    var trackInfo: AudioTrackInfo? {
        AudioTrackInfo(sampleRate: output.format.sampleRate, channels: output.format.channels, bitrate: output.bitrate,
                       audioSpecificConfig: output.audioSpecificConfig)
    }

    func process(_ packet: UnsafeMutablePointer<AVPacket>, into out: inout [MediaPacket]) throws(LivePushError) {
        try decoder.send(packet)
        while try decoder.receive() {
            try resample(decoder.frame)
            try output.encodeFullFrames(into: &out)
        }
    }

    func finish(into out: inout [MediaPacket]) throws(LivePushError) {
        try decoder.send(nil)
        while try decoder.receive() {
            try resample(decoder.frame)
            try output.encodeFullFrames(into: &out)
        }
        try resample(nil)  // the resampler's delayed samples
        try output.finish(into: &out)
    }

    func reset() throws(LivePushError) {
        decoder.flush()
        resampler.reset()
        try output.reset()
    }

    /// Converts a decoded frame (nil = flush) and appends it to the FIFO.
    private func resample(_ frame: UnsafeMutablePointer<AVFrame>?) throws(LivePushError) {
        if let frame, output.nextPts == nil {
            let ts = frame.pointee.best_effort_timestamp != FF.noPTS ? frame.pointee.best_effort_timestamp : frame.pointee.pts
            let length = av_rescale_q(Int64(frame.pointee.nb_samples), AVRational(num: 1, den: max(1, frame.pointee.sample_rate)),
                                      stream.timeBase)
            if let start = startTime, ts != FF.noPTS, let end = FF.micros(ts + length, stream.timeBase), end <= start { return }
            output.nextPts = ts == FF.noPTS ? 0 : av_rescale_q(ts, stream.timeBase, AVRational(num: 1, den: sampleRate))
        }
        try resampler.convert(frame) { planes, count throws(LivePushError) in try output.write(planes, count: count) }
    }
}
