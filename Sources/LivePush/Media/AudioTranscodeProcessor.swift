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
    private var resampler: OpaquePointer?
    /// Input format the resampler was set up for.
    private var resamplerInput: (format: Int32, rate: Int32, channels: Int32) = (-1, 0, 0)
    /// Scratch frame: resampler output.
    private let converted: UnsafeMutablePointer<AVFrame>

    init(stream: DemuxedStream, demuxer: FFDemuxer, options: MediaSourceOptions, mixer: AudioMixer? = nil) throws(LivePushError) {
        guard let parameters = demuxer.codecParameters(of: stream.index) else {
            throw LivePushError(.noUsableStream, "audio stream \(stream.index)")
        }
        self.stream = stream
        streamIndex = stream.index
        decoder = try FFDecoder(parameters: parameters, timeBase: stream.timeBase)
        let src = stream.sampleRate
        let format = AudioFormat(sampleRate: (src == 44100 || src == 22050 || src == 11025 || src <= 0) ? 44100 : 48000,
                                 channels: stream.channels == 1 ? 1 : 2)
        guard let converted = av_frame_alloc() else { throw LivePushError(.outOfMemory, "audio buffers") }
        self.converted = converted
        output = try AudioAACEncoder(format: format, bitrate: options.resolvedAudioBitrate(channels: format.channels), mixer: mixer)
    }

    deinit {
        var f: UnsafeMutablePointer<AVFrame>? = converted
        av_frame_free(&f)
        swr_free(&resampler)
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
        swr_free(&resampler)
        resamplerInput = (-1, 0, 0)
        try output.reset()
    }

    /// Silence under a pause image: `duration` µs of zero samples after what is buffered
    /// (the mixer still adds the BGM to it).
    func appendSilence(duration: Int64, into out: inout [MediaPacket]) throws(LivePushError) -> Bool {
        let samples = output.format.samples(inMicros: duration)
        guard samples > 0 else { return true }
        try output.writeSilence(count: samples)
        if output.nextPts == nil { output.nextPts = 0 }
        try output.encodeFullFrames(into: &out)
        return true
    }

    /// Converts a decoded frame (nil = flush) and appends it to the FIFO.
    private func resample(_ frame: UnsafeMutablePointer<AVFrame>?) throws(LivePushError) {
        if let frame {
            let f = frame.pointee
            if output.nextPts == nil {
                let ts = f.best_effort_timestamp != FF.noPTS ? f.best_effort_timestamp : f.pts
                output.nextPts = ts == FF.noPTS ? 0 : av_rescale_q(ts, stream.timeBase, AVRational(num: 1, den: sampleRate))
            }
            let input = (f.format, f.sample_rate, f.ch_layout.nb_channels)
            if resampler == nil || input != resamplerInput {
                try makeResampler(for: frame)
            }
        }
        guard let resampler else { return }
        let inSamples = frame?.pointee.nb_samples ?? 0
        let capacity = swr_get_out_samples(resampler, inSamples) + 32
        if capacity > converted.pointee.nb_samples {
            av_frame_unref(converted)
            converted.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
            av_channel_layout_default(&converted.pointee.ch_layout, channels)
            converted.pointee.nb_samples = capacity
            let rc = av_frame_get_buffer(converted, 0)
            guard rc >= 0 else { throw LivePushError(.outOfMemory, "audio buffer: \(FF.describe(rc))") }
        }
        let outPointers = converted.pointee.extended_data
        let inPointers = frame.map {
            UnsafeMutableRawPointer($0.pointee.extended_data!).assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
        }
        while true {
            let got = swr_convert(resampler, outPointers, converted.pointee.nb_samples, frame == nil ? nil : inPointers, frame == nil ? 0 : inSamples)
            guard got >= 0 else { throw LivePushError(.transcodeFailed, "resampling: \(FF.describe(got))") }
            if got > 0 { try output.write(outPointers, count: got) }
            // Flushing may take several calls; converting one frame takes one.
            if frame != nil || got == 0 { break }
        }
    }

    private func makeResampler(for frame: UnsafeMutablePointer<AVFrame>) throws(LivePushError) {
        swr_free(&resampler)
        var inLayout = AVChannelLayout()
        if frame.pointee.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC || frame.pointee.ch_layout.nb_channels == 0 {
            av_channel_layout_default(&inLayout, max(1, frame.pointee.ch_layout.nb_channels))
        } else {
            av_channel_layout_copy(&inLayout, &frame.pointee.ch_layout)
        }
        defer { av_channel_layout_uninit(&inLayout) }
        var outLayout = AVChannelLayout()
        av_channel_layout_default(&outLayout, channels)
        defer { av_channel_layout_uninit(&outLayout) }
        var ctx: OpaquePointer?
        var rc = swr_alloc_set_opts2(&ctx, &outLayout, AV_SAMPLE_FMT_FLTP, sampleRate,
                                     &inLayout, AVSampleFormat(frame.pointee.format), frame.pointee.sample_rate, 0, nil)
        if rc >= 0 { rc = swr_init(ctx) }
        guard rc >= 0, ctx != nil else {
            swr_free(&ctx)
            throw LivePushError(.transcodeFailed, "resampler setup: \(FF.describe(rc))")
        }
        resampler = ctx
        resamplerInput = (frame.pointee.format, frame.pointee.sample_rate, frame.pointee.ch_layout.nb_channels)
    }
}
