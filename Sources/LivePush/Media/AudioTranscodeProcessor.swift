import CFFmpeg

/// Decodes any audio libavcodec can decode, resamples it to planar float at 44.1 or 48 kHz
/// (mono stays mono, everything else becomes stereo), buffers it in an AVAudioFifo to the
/// encoder's frame size and encodes AAC with FFmpeg's native encoder. The ASC is the
/// encoder's global header; packets are raw AAC frames.
final class AudioTranscodeProcessor: AudioPacketProcessor {
    let streamIndex: Int32
    let kind = MediaPacket.Kind.audio
    private let stream: DemuxedStream
    private let options: MediaSourceOptions
    private let decoder: FFDecoder
    private var encoder: FFEncoder
    private let sampleRate: Int32
    private let channels: Int32
    private let bitrate: Int
    private let asc: [UInt8]
    private var resampler: OpaquePointer?
    /// Input format the resampler was set up for.
    private var resamplerInput: (format: Int32, rate: Int32, channels: Int32) = (-1, 0, 0)
    private let fifo: OpaquePointer
    /// Scratch frames: resampler output, encoder input.
    private let converted: UnsafeMutablePointer<AVFrame>
    private let encoderFrame: UnsafeMutablePointer<AVFrame>
    /// Next encoder input pts in samples (1/sampleRate); nil until the first decoded frame.
    private var nextPts: Int64?

    init(stream: DemuxedStream, demuxer: FFDemuxer, options: MediaSourceOptions) throws(LivePushError) {
        guard let parameters = demuxer.codecParameters(of: stream.index) else {
            throw LivePushError(.noUsableStream, "audio stream \(stream.index)")
        }
        self.stream = stream
        self.options = options
        streamIndex = stream.index
        decoder = try FFDecoder(parameters: parameters, timeBase: stream.timeBase)
        let src = stream.sampleRate
        sampleRate = (src == 44100 || src == 22050 || src == 11025 || src <= 0) ? 44100 : 48000
        channels = stream.channels == 1 ? 1 : 2
        bitrate = options.resolvedAudioBitrate(channels: Int(channels))
        guard let fifo = av_audio_fifo_alloc(AV_SAMPLE_FMT_FLTP, channels, 4096),
              let converted = av_frame_alloc(), let encoderFrame = av_frame_alloc() else {
            throw LivePushError(.outOfMemory, "audio buffers")
        }
        self.fifo = fifo
        self.converted = converted
        self.encoderFrame = encoderFrame
        encoder = try Self.makeEncoder(sampleRate: sampleRate, channels: channels, bitrate: bitrate)
        asc = encoder.extradata
        guard !asc.isEmpty else { throw LivePushError(.encoderUnavailable, "\(encoder.name) gave no AudioSpecificConfig") }
    }

    deinit {
        av_audio_fifo_free(fifo)
        var f: UnsafeMutablePointer<AVFrame>? = converted
        av_frame_free(&f)
        f = encoderFrame
        av_frame_free(&f)
        swr_free(&resampler)
    }

    private static func makeEncoder(sampleRate: Int32, channels: Int32, bitrate: Int) throws(LivePushError) -> FFEncoder {
        guard let codec = avcodec_find_encoder_by_name("aac") ?? avcodec_find_encoder(AV_CODEC_ID_AAC) else {
            throw LivePushError(.encoderUnavailable, "no AAC encoder")
        }
        return try FFEncoder(codec: codec) { ctx in
            ctx.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
            ctx.pointee.sample_rate = sampleRate
            av_channel_layout_default(&ctx.pointee.ch_layout, channels)
            ctx.pointee.bit_rate = Int64(bitrate)
            ctx.pointee.time_base = AVRational(num: 1, den: sampleRate)
        }
    }

    var isConfigured: Bool { true }

    var trackInfo: AudioTrackInfo? {
        AudioTrackInfo(sampleRate: Int(sampleRate), channels: Int(channels), bitrate: bitrate, audioSpecificConfig: asc)
    }

    private var frameSize: Int32 { Int32(encoder.frameSize > 0 ? encoder.frameSize : 1024) }

    func process(_ packet: UnsafeMutablePointer<AVPacket>, into out: inout [MediaPacket]) throws(LivePushError) {
        try decoder.send(packet)
        while try decoder.receive() {
            try resample(decoder.frame)
            try encodeFullFrames(into: &out)
        }
    }

    func finish(into out: inout [MediaPacket]) throws(LivePushError) {
        try decoder.send(nil)
        while try decoder.receive() {
            try resample(decoder.frame)
            try encodeFullFrames(into: &out)
        }
        try resample(nil)  // the resampler's delayed samples
        try encodeFullFrames(into: &out)
        let rest = av_audio_fifo_size(fifo)
        if rest > 0 { try encodeFrame(samples: rest, into: &out) }
        try encoder.send(nil)
        try drain(into: &out)
    }

    func reset() throws(LivePushError) {
        decoder.flush()
        av_audio_fifo_reset(fifo)
        swr_free(&resampler)
        resamplerInput = (-1, 0, 0)
        nextPts = nil
        encoder = try Self.makeEncoder(sampleRate: sampleRate, channels: channels, bitrate: bitrate)
    }

    /// Silence under a pause image: `duration` µs of zero samples after what is buffered.
    func appendSilence(duration: Int64, into out: inout [MediaPacket]) throws(LivePushError) -> Bool {
        let samples = Int(duration * Int64(sampleRate) / 1_000_000)
        guard samples > 0 else { return true }
        let silence = try AudioFrame(sampleRate: Int(sampleRate), channels: Int(channels), sampleCount: samples)
        let raw = UnsafeMutableRawPointer(silence.storage.frame.pointee.extended_data!)
            .assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        guard av_audio_fifo_write(fifo, raw, Int32(samples)) >= samples else { throw LivePushError(.outOfMemory, "audio FIFO") }
        if nextPts == nil { nextPts = 0 }
        try encodeFullFrames(into: &out)
        return true
    }

    /// Converts a decoded frame (nil = flush) and appends it to the FIFO.
    private func resample(_ frame: UnsafeMutablePointer<AVFrame>?) throws(LivePushError) {
        if let frame {
            let f = frame.pointee
            if nextPts == nil {
                let ts = f.best_effort_timestamp != FF.noPTS ? f.best_effort_timestamp : f.pts
                nextPts = ts == FF.noPTS ? 0 : av_rescale_q(ts, stream.timeBase, AVRational(num: 1, den: sampleRate))
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
            if got > 0 {
                let raw = UnsafeMutableRawPointer(outPointers!).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
                guard av_audio_fifo_write(fifo, raw, got) >= got else { throw LivePushError(.outOfMemory, "audio FIFO") }
            }
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

    private func encodeFullFrames(into out: inout [MediaPacket]) throws(LivePushError) {
        while av_audio_fifo_size(fifo) >= frameSize {
            try encodeFrame(samples: frameSize, into: &out)
        }
    }

    /// Encodes `samples` samples from the FIFO, padded with silence to a whole frame.
    private func encodeFrame(samples: Int32, into out: inout [MediaPacket]) throws(LivePushError) {
        let size = frameSize
        if encoderFrame.pointee.data.0 == nil {
            encoderFrame.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
            av_channel_layout_default(&encoderFrame.pointee.ch_layout, channels)
            encoderFrame.pointee.sample_rate = sampleRate
            encoderFrame.pointee.nb_samples = size
            let rc = av_frame_get_buffer(encoderFrame, 0)
            guard rc >= 0 else { throw LivePushError(.outOfMemory, "audio frame: \(FF.describe(rc))") }
        }
        let rc = av_frame_make_writable(encoderFrame)
        guard rc >= 0 else { throw LivePushError(.outOfMemory, "audio frame: \(FF.describe(rc))") }
        let raw = UnsafeMutableRawPointer(encoderFrame.pointee.extended_data!).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        let read = av_audio_fifo_read(fifo, raw, samples)
        if read < size {
            av_samples_set_silence(encoderFrame.pointee.extended_data, max(0, read), size - max(0, read), channels, AV_SAMPLE_FMT_FLTP)
        }
        encoderFrame.pointee.pts = nextPts ?? 0
        nextPts = (nextPts ?? 0) + Int64(size)
        try encoder.send(encoderFrame)
        try drain(into: &out)
    }

    private func drain(into out: inout [MediaPacket]) throws(LivePushError) {
        let tb = encoder.timeBase
        while try encoder.receive() {
            let pkt = encoder.packet.pointee
            guard let base = pkt.data, pkt.size > 0 else { continue }
            let dts = FF.micros(pkt.dts, tb) ?? FF.micros(pkt.pts, tb) ?? 0
            let pts = max(FF.micros(pkt.pts, tb) ?? dts, dts)
            let duration = FF.micros(pkt.duration > 0 ? pkt.duration : Int64(frameSize), tb) ?? 0
            out.append(MediaPacket(kind: .audio, data: Array(UnsafeBufferPointer(start: base, count: Int(pkt.size))),
                                   dts: dts, pts: pts, duration: duration, importance: .key))
        }
    }
}
