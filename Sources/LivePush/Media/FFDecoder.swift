import CFFmpeg

/// Owns a libavcodec decoder context and the frame it decodes into.
final class FFDecoder {
    private var context: UnsafeMutablePointer<AVCodecContext>?
    /// The frame `receive()` fills; valid until the next `receive()`.
    let frame: UnsafeMutablePointer<AVFrame>

    /// Opens a decoder for a stream. Throws `.unsupportedCodec` when libavcodec has none.
    init(parameters: UnsafePointer<AVCodecParameters>, timeBase: AVRational, threads: Int32 = 2) throws(LivePushError) {
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
        ctx.pointee.thread_count = threads
        rc = avcodec_open2(ctx, codec, nil)
        guard rc >= 0 else { throw LivePushError(.unsupportedCodec, "\(name) decoder cannot open: \(FF.describe(rc))") }
    }

    deinit {
        var f: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&f)
        avcodec_free_context(&context)
    }

    /// Consecutive decode errors; like the ffmpeg CLI, a damaged packet is skipped, but a
    /// stream that never decodes again is an error.
    private var failures = 0
    /// libav's code for the last failure (0: none yet), to say why nothing decoded.
    private(set) var lastError: Int32 = 0
    private static let maxConsecutiveFailures = 64

    /// Sends a packet, or nil to start draining. Corrupt packets are skipped.
    func send(_ packet: UnsafeMutablePointer<AVPacket>?) throws(LivePushError) {
        let rc = avcodec_send_packet(context, packet)
        if rc >= 0 || rc == FF.eof || rc == FF.eagain { return }
        try failed(rc)
    }

    /// Fills `frame` with the next decoded frame; false when more input is needed or drained.
    func receive() throws(LivePushError) -> Bool {
        let rc = avcodec_receive_frame(context, frame)
        if rc >= 0 { failures = 0; return true }
        if rc == FF.eagain || rc == FF.eof { return false }
        try failed(rc)
        return false
    }

    private func failed(_ rc: Int32) throws(LivePushError) {
        failures += 1
        lastError = rc
        if failures >= Self.maxConsecutiveFailures {
            throw LivePushError(.transcodeFailed, "decoding: \(FF.describe(rc))")
        }
    }

    /// Drops buffered frames (after a seek, or to reuse the decoder after draining).
    func flush() {
        avcodec_flush_buffers(context)
    }
}
