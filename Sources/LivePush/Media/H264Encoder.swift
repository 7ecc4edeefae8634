import CFFmpeg

/// libx264 (or, when it is missing, any other H.264 encoder libavcodec has) set up for live
/// pushing: no B-frames, a fixed GOP, constrained bitrate, zero-latency tuning (no lookahead,
/// no B-frames) with frame threads; output as AVCC ``MediaPacket``s with µs timestamps.
final class H264Encoder {
    let settings: VideoEncoderSettings
    private let encoder: FFEncoder
    /// AVCDecoderConfigurationRecord for the FLV sequence header.
    let decoderConfiguration: [UInt8]
    private(set) var bitrate: Int
    var name: String { encoder.name }

    init(settings: VideoEncoderSettings) throws(LivePushError) {
        self.settings = settings
        bitrate = settings.initialBitrate
        guard let codec = avcodec_find_encoder_by_name("libx264") ?? avcodec_find_encoder(AV_CODEC_ID_H264) else {
            throw LivePushError(.encoderUnavailable, "no H.264 encoder (install libavcodec with libx264)")
        }
        let bitrate = self.bitrate
        var options = [("preset", settings.preset), ("tune", "zerolatency"), ("forced-idr", "1")]
        // zerolatency encodes each frame with slice threads: no added delay, but on two cores
        // the threads wait on each other and on the caller. Frame threads let the encoder work on
        // frame N while this thread decodes and filters frame N+1; the cost is `threads` frames
        // of latency (100 ms at 30 fps), nothing next to an RTMP CDN's seconds.
        if !settings.sliceThreads { options.append(("x264-params", "sliced-threads=0")) }
        encoder = try FFEncoder(codec: codec, privateOptions: options) { ctx in
            ctx.pointee.width = Int32(settings.width)
            ctx.pointee.height = Int32(settings.height)
            ctx.pointee.pix_fmt = AV_PIX_FMT_YUV420P
            ctx.pointee.time_base = FF.microsTimeBase
            ctx.pointee.framerate = av_d2q(settings.frameRate, 100_000)
            ctx.pointee.gop_size = Int32(settings.gopFrames)
            ctx.pointee.max_b_frames = 0
            Self.applyBitrate(bitrate, to: ctx)
            ctx.pointee.thread_count = settings.sliceThreads ? 2 : 3
        }
        let extradata = encoder.extradata
        if AVCCFormat.parseDecoderConfiguration(extradata) != nil {
            decoderConfiguration = AVCCFormat.withFourByteLengths(extradata)
        } else if let built = AnnexBConverter.decoderConfigurationRecord(fromAnnexB: extradata) {
            decoderConfiguration = built
        } else {
            throw LivePushError(.encoderUnavailable, "\(encoder.name) gave no SPS/PPS")
        }
    }

    /// A constrained (VBV) bitrate, so that one second never carries much more than the target:
    /// that is what a congested link can be asked to carry.
    private static func applyBitrate(_ bitrate: Int, to ctx: UnsafeMutablePointer<AVCodecContext>) {
        ctx.pointee.bit_rate = Int64(bitrate)
        ctx.pointee.rc_max_rate = Int64(bitrate)
        ctx.pointee.rc_buffer_size = Int32(clamping: bitrate)
    }

    /// Takes effect from the next frame on.
    func setBitrate(_ newValue: Int) {
        guard newValue != bitrate else { return }
        bitrate = newValue
        encoder.reconfigure { Self.applyBitrate(newValue, to: $0) }
    }

    /// Encodes a YUV420P picture of the configured size at `timestamp` (µs).
    func encode(_ frame: UnsafeMutablePointer<AVFrame>, timestamp: Int64, keyframe: Bool, into out: inout [MediaPacket]) throws(LivePushError) {
        frame.pointee.pts = timestamp
        frame.pointee.pict_type = keyframe ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE
        try encoder.send(frame)
        try drain(into: &out)
    }

    func finish(into out: inout [MediaPacket]) throws(LivePushError) {
        try encoder.send(nil)
        try drain(into: &out)
    }

    private func drain(into out: inout [MediaPacket]) throws(LivePushError) {
        while try encoder.receive() {
            let pkt = encoder.packet.pointee
            guard let base = pkt.data, pkt.size > 0 else { continue }
            let bytes = UnsafeBufferPointer(start: base, count: Int(pkt.size))
            let tb = encoder.timeBase
            let dts = FF.micros(pkt.dts, tb) ?? FF.micros(pkt.pts, tb) ?? 0
            let pts = max(FF.micros(pkt.pts, tb) ?? dts, dts)
            let data: [UInt8]
            let summary: AnnexBConverter.FrameSummary
            if AnnexBConverter.startsWithStartCode(bytes) {
                (data, summary) = AnnexBConverter.avcc(fromAnnexB: bytes, dropParameterSets: true)
            } else {
                data = Array(bytes)
                summary = AVCCFormat.summarize(bytes, lengthSize: 4) ?? .init(isReference: true, hasIDR: false)
            }
            let isKey = pkt.flags & livepush_av_pkt_flag_key() != 0
            out.append(MediaPacket(kind: .video, data: data, dts: dts, pts: pts, duration: settings.frameDuration,
                                   importance: isKey ? .key : (summary.isReference ? .reference : .disposable)))
        }
    }
}
