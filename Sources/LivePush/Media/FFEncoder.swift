import CFFmpeg

/// Owns a libavcodec encoder context and the packet it encodes into.
final class FFEncoder {
    private var context: UnsafeMutablePointer<AVCodecContext>?
    /// The packet `receive()` fills; valid until the next `receive()`.
    let packet: UnsafeMutablePointer<AVPacket>
    let name: String

    /// Opens `codec` after `configure` has set the context up. `privateOptions` go to the
    /// encoder's private options (unknown ones are ignored, so fallbacks can share them).
    init(
        codec: UnsafePointer<AVCodec>, privateOptions: [(String, String)] = [],
        configure: (UnsafeMutablePointer<AVCodecContext>) -> Void
    ) throws(LivePushError) {
        name = String(cString: codec.pointee.name)
        guard let pkt = av_packet_alloc() else { throw LivePushError(.outOfMemory, "av_packet_alloc") }
        packet = pkt
        guard let ctx = avcodec_alloc_context3(codec) else { throw LivePushError(.outOfMemory, "avcodec_alloc_context3") }
        context = ctx
        configure(ctx)
        ctx.pointee.flags |= livepush_av_codec_flag_global_header()
        if let priv = ctx.pointee.priv_data {
            for (key, value) in privateOptions { _ = av_opt_set(priv, key, value, 0) }
        }
        let rc = avcodec_open2(ctx, codec, nil)
        guard rc >= 0 else { throw LivePushError(.encoderUnavailable, "\(name) cannot open: \(FF.describe(rc))") }
    }

    deinit {
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
        avcodec_free_context(&context)
    }

    /// The global header: SPS/PPS for H.264 (Annex B for libx264), the ASC for AAC.
    var extradata: [UInt8] {
        guard let ctx = context, let data = ctx.pointee.extradata, ctx.pointee.extradata_size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(ctx.pointee.extradata_size)))
    }

    /// Changes settings of the open encoder between frames (libx264 picks up a new bit_rate,
    /// rc_max_rate and rc_buffer_size at its next frame).
    func reconfigure(_ body: (UnsafeMutablePointer<AVCodecContext>) -> Void) {
        if let context { body(context) }
    }

    var timeBase: AVRational { context?.pointee.time_base ?? AVRational(num: 1, den: 1) }
    /// Samples per audio frame the encoder wants (0 = any).
    var frameSize: Int { Int(context?.pointee.frame_size ?? 0) }

    /// Sends a frame, or nil to start draining.
    func send(_ frame: UnsafeMutablePointer<AVFrame>?) throws(LivePushError) {
        let rc = avcodec_send_frame(context, frame)
        if rc >= 0 || rc == FF.eof { return }
        throw LivePushError(.transcodeFailed, "\(name) encoding: \(FF.describe(rc))")
    }

    /// Fills `packet` with the next encoded packet; false when more input is needed or drained.
    func receive() throws(LivePushError) -> Bool {
        let rc = avcodec_receive_packet(context, packet)
        if rc >= 0 { return true }
        if rc == FF.eagain || rc == FF.eof { return false }
        throw LivePushError(.transcodeFailed, "\(name) encoding: \(FF.describe(rc))")
    }
}
