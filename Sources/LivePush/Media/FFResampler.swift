import CFFmpeg

/// libswresample into one fixed ``AudioFormat`` (planar float unless told otherwise), set up
/// again whenever the input's sample format, rate or channel count changes (a stream may
/// change mid-file).
final class FFResampler {
    let format: AudioFormat
    /// What comes out: planar float for the mixer and AAC, interleaved s16 or float for libopus
    /// (then only the sink's first plane is set).
    let sampleFormat: AVSampleFormat
    /// The code a failure is reported with (`transcodeFailed` for the source, `bgmOpenFailed` for music).
    private let failure: LivePushError.Code
    private var context: OpaquePointer?
    private var input: (format: Int32, rate: Int32, channels: Int32) = (-1, 0, 0)
    /// Output scratch, grown as needed.
    private let converted: UnsafeMutablePointer<AVFrame>

    init(format: AudioFormat, sampleFormat: AVSampleFormat = AV_SAMPLE_FMT_FLTP, failure: LivePushError.Code) throws(LivePushError) {
        guard let frame = av_frame_alloc() else { throw LivePushError(.outOfMemory, "audio buffers") }
        self.format = format
        self.sampleFormat = sampleFormat
        self.failure = failure
        converted = frame
    }

    deinit {
        var f: UnsafeMutablePointer<AVFrame>? = converted
        av_frame_free(&f)
        swr_free(&context)
    }

    /// Forgets the delay line (after a seek).
    func reset() {
        swr_free(&context)
        input = (-1, 0, 0)
    }

    /// Converts `frame`, or with nil the samples still in the delay line, and hands each
    /// converted block to `sink` as its planes (per channel for a planar format, one
    /// interleaved plane otherwise) and a sample count.
    func convert(
        _ frame: UnsafeMutablePointer<AVFrame>?,
        _ sink: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, Int32) throws(LivePushError) -> Void
    ) throws(LivePushError) {
        if let frame {
            let f = frame.pointee
            if context == nil || (f.format, f.sample_rate, f.ch_layout.nb_channels) != input { try setUp(for: frame) }
        }
        guard let context else { return }
        let inSamples = frame?.pointee.nb_samples ?? 0
        try reserve(swr_get_out_samples(context, inSamples) + 32)
        let inPointers = frame.map {
            UnsafeMutableRawPointer($0.pointee.extended_data!).assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
        }
        while true {
            let got = swr_convert(context, converted.pointee.extended_data, converted.pointee.nb_samples, inPointers, inSamples)
            guard got >= 0 else { throw LivePushError(failure, "resampling: \(FF.describe(got))") }
            if got > 0 { try sink(converted.pointee.extended_data, got) }
            // Flushing may take several calls; converting one frame takes one.
            if frame != nil || got == 0 { break }
        }
    }

    private func reserve(_ samples: Int32) throws(LivePushError) {
        guard samples > converted.pointee.nb_samples else { return }
        av_frame_unref(converted)
        converted.pointee.format = sampleFormat.rawValue
        av_channel_layout_default(&converted.pointee.ch_layout, Int32(format.channels))
        converted.pointee.nb_samples = max(samples, 4096)
        let rc = av_frame_get_buffer(converted, 0)
        guard rc >= 0 else { throw LivePushError(.outOfMemory, "audio buffer: \(FF.describe(rc))") }
    }

    private func setUp(for frame: UnsafeMutablePointer<AVFrame>) throws(LivePushError) {
        swr_free(&context)
        var inLayout = AVChannelLayout()
        if frame.pointee.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC || frame.pointee.ch_layout.nb_channels == 0 {
            av_channel_layout_default(&inLayout, max(1, frame.pointee.ch_layout.nb_channels))
        } else {
            av_channel_layout_copy(&inLayout, &frame.pointee.ch_layout)
        }
        defer { av_channel_layout_uninit(&inLayout) }
        var outLayout = AVChannelLayout()
        av_channel_layout_default(&outLayout, Int32(format.channels))
        defer { av_channel_layout_uninit(&outLayout) }
        var ctx: OpaquePointer?
        var rc = swr_alloc_set_opts2(&ctx, &outLayout, sampleFormat, Int32(format.sampleRate),
                                     &inLayout, AVSampleFormat(frame.pointee.format), frame.pointee.sample_rate, 0, nil)
        if rc >= 0 { rc = swr_init(ctx) }
        guard rc >= 0, ctx != nil else {
            swr_free(&ctx)
            throw LivePushError(failure, "resampler setup: \(FF.describe(rc))")
        }
        context = ctx
        input = (frame.pointee.format, frame.pointee.sample_rate, frame.pointee.ch_layout.nb_channels)
    }
}
