import CFFmpeg

/// Owns a libavcodec decoder context and the frame it decodes into.
final class FFDecoder {
    private var context: UnsafeMutablePointer<AVCodecContext>?
    /// The frame `receive()` fills; valid until the next `receive()`.
    let frame: UnsafeMutablePointer<AVFrame>

    /// Opens a decoder for a stream. Throws `.unsupportedCodec` when libavcodec has none.
    init(parameters: UnsafePointer<AVCodecParameters>, timeBase: AVRational) throws(LivePushError) {
        let name = FF.codecName(parameters.pointee.codec_id)
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
            throw LivePushError(.unsupportedCodec, "no decoder for \(name)")
        }
        guard let frame = av_frame_alloc() else { throw LivePushError(.outOfMemory, "av_frame_alloc") }
        self.frame = frame
        guard let ctx = avcodec_alloc_context3(codec) else { throw LivePushError(.outOfMemory, "avcodec_alloc_context3") }
        context = ctx
        var rc = avcodec_parameters_to_context(ctx, parameters)
        guard rc >= 0 else { throw LivePushError(.transcodeFailed, "\(name) decoder: \(FF.describe(rc))") }
        ctx.pointee.pkt_timebase = timeBase
        ctx.pointee.thread_count = 2
        rc = avcodec_open2(ctx, codec, nil)
        guard rc >= 0 else { throw LivePushError(.unsupportedCodec, "\(name) decoder cannot open: \(FF.describe(rc))") }
    }

    deinit {
        var f: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&f)
        avcodec_free_context(&context)
    }

    /// Sends a packet, or nil to start draining. Corrupt packets are skipped.
    func send(_ packet: UnsafeMutablePointer<AVPacket>?) throws(LivePushError) {
        let rc = avcodec_send_packet(context, packet)
        if rc >= 0 || rc == FF.eof || rc == FF.invalidData || rc == FF.eagain { return }
        throw LivePushError(.transcodeFailed, "decoding: \(FF.describe(rc))")
    }

    /// Fills `frame` with the next decoded frame; false when more input is needed or drained.
    func receive() throws(LivePushError) -> Bool {
        let rc = avcodec_receive_frame(context, frame)
        if rc >= 0 { return true }
        if rc == FF.eagain || rc == FF.eof { return false }
        if rc == FF.invalidData { return false }
        throw LivePushError(.transcodeFailed, "decoding: \(FF.describe(rc))")
    }

    /// Drops buffered frames (after a seek, or to reuse the decoder after draining).
    func flush() {
        avcodec_flush_buffers(context)
    }
}
