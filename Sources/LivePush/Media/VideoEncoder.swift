import CFFmpeg

/// A video encoder set up for live pushing: no B-frames, a fixed GOP, constrained bitrate,
/// zero-latency tuning. H.264 is libx264 (or, when it is missing, any other H.264 encoder
/// libavcodec has), HEVC libx265, AV1 libsvtav1 (else libaom-av1). Output: ``MediaPacket``s
/// with µs timestamps, as FLV and E-RTMP carry them (length-prefixed NAL units; AV1 OBUs).
final class VideoEncoder {
    let settings: VideoEncoderSettings
    private let encoder: FFEncoder
    /// The configuration record for the sequence header (avcC, hvcC or av1C).
    let decoderConfiguration: [UInt8]
    private(set) var bitrate: Int
    var name: String { encoder.name }

    init(settings: VideoEncoderSettings) throws(LivePushError) {
        self.settings = settings
        bitrate = settings.initialBitrate
        let (codec, options) = try Self.codec(for: settings)
        let bitrate = self.bitrate
        encoder = try FFEncoder(codec: codec, privateOptions: options) { ctx in
            ctx.pointee.width = Int32(settings.width)
            ctx.pointee.height = Int32(settings.height)
            ctx.pointee.pix_fmt = AV_PIX_FMT_YUV420P
            ctx.pointee.time_base = FF.microsTimeBase
            ctx.pointee.framerate = av_d2q(settings.frameRate, 100_000)
            ctx.pointee.gop_size = Int32(settings.gopFrames)
            ctx.pointee.max_b_frames = 0
            Self.applyBitrate(bitrate, codec: settings.codec, to: ctx)
            // Two threads either way. A third frame thread costs libx264 another set of frames
            // (10 MiB of peak RSS at 720p: 110 against 99 MiB in the transcode benchmark) and no
            // speed on two cores, where it only contends with the producer (alternating runs:
            // 80-109 fps with two, 83-105 with three).
            ctx.pointee.thread_count = 2
            // FF_PROFILE_H264_CONSTRAINED_BASELINE (66 | FF_PROFILE_H264_CONSTRAINED), a macro
            // Swift does not import: for an H.264 encoder other than libx264 (which takes `profile`).
            if settings.constrainedBaseline { ctx.pointee.profile = 66 | 512 }
        }
        let extradata = encoder.extradata
        let record: [UInt8]? = switch settings.codec {
        case .h264 where AVCCFormat.parseDecoderConfiguration(extradata) != nil: AVCCFormat.withFourByteLengths(extradata)
        case .h264: AnnexBConverter.decoderConfigurationRecord(fromAnnexB: extradata)
        case .hevc: HEVCConfiguration.record(fromAnnexB: extradata)
        case .av1: AV1Configuration.record(fromOBUs: extradata)
        case .vp9: nil
        }
        guard let record else { throw LivePushError(.encoderUnavailable, "\(encoder.name) gave no codec configuration") }
        if settings.constrainedBaseline, let made = H264ProfileLevel(avcC: record), !made.isConstrainedBaseline {
            throw LivePushError(.encoderUnavailable, "\(encoder.name) made H.264 profile \(made), not Constrained Baseline (42e0xx)")
        }
        decoderConfiguration = record
    }

    /// The encoder for the settings' codec, with its live options.
    private static func codec(for settings: VideoEncoderSettings) throws(LivePushError) -> (UnsafePointer<AVCodec>, [(String, String)]) {
        switch settings.codec {
        case .h264:
            guard let codec = avcodec_find_encoder_by_name("libx264") ?? avcodec_find_encoder(AV_CODEC_ID_H264) else {
                throw LivePushError(.encoderUnavailable, "no H.264 encoder (install libavcodec with libx264)")
            }
            var options = [("preset", settings.preset), ("tune", "zerolatency"), ("forced-idr", "1")]
            // zerolatency encodes each frame with slice threads: no added delay, but on two cores
            // the threads wait on each other and on the caller. Frame threads let the encoder work on
            // frame N while this thread decodes and filters frame N+1; the cost is a frame of
            // latency per extra thread (33 ms at 30 fps), nothing next to an RTMP CDN's seconds.
            // scenecut=0: a ladder's variants keep their keyframes where the others have theirs.
            let params = (settings.sliceThreads ? [] : ["sliced-threads=0"]) + (settings.fixedGOP ? ["scenecut=0"] : [])
            if !params.isEmpty { options.append(("x264-params", params.joined(separator: ":"))) }
            // x264's baseline is Constrained Baseline (constraint_set0 and 1: 42c0xx): no B-frames, no CABAC.
            if settings.constrainedBaseline { options.append(("profile", "baseline")) }
            return (codec, options)
        case .hevc:
            guard let codec = avcodec_find_encoder_by_name("libx265") else {
                throw LivePushError(.encoderUnavailable, "no HEVC encoder (install libavcodec with libx265)")
            }
            // x265's logging goes to stderr unless told otherwise; repeat-headers keeps the VPS/SPS/PPS
            // in the global header only (the hvcC), and no B-frames keep decode order = presentation order.
            return (codec, [("preset", settings.preset), ("tune", "zerolatency"), ("forced-idr", "1"),
                            ("x265-params", "bframes=0:log-level=error:repeat-headers=0:keyint=\(settings.gopFrames)"
                                + (settings.fixedGOP ? ":scenecut=0" : ""))])
        case .av1:
            if let codec = avcodec_find_encoder_by_name("libsvtav1") {
                // Preset 12 is SVT-AV1's fastest: live, on two cores. pred-struct=1 is its low-delay
                // structure (no mini-GOP of 16 frames held back), rate controlled as CBR. SVT writes
                // its banner and warnings to stderr itself: errors only.
                setenv("SVT_LOG", "1", 0)
                return (codec, [("preset", "12"), ("svtav1-params", "pred-struct=1")])
            }
            guard let codec = avcodec_find_encoder_by_name("libaom-av1") else {
                throw LivePushError(.encoderUnavailable, "no AV1 encoder (install libavcodec with libsvtav1)")
            }
            return (codec, [("cpu-used", "8"), ("usage", "realtime"), ("lag-in-frames", "0")])
        case .vp9:
            throw LivePushError(.encoderUnavailable, "VP9 is sent only as it is (--video-codec copy), never encoded")
        }
    }

    /// A constrained (VBV) bitrate, so that one second never carries much more than the target:
    /// that is what a congested link can be asked to carry.
    /// SVT-AV1 refuses a maximum rate equal to the target; in its low-delay mode it runs CBR.
    private static func applyBitrate(_ bitrate: Int, codec: VideoCodec, to ctx: UnsafeMutablePointer<AVCodecContext>) {
        ctx.pointee.bit_rate = Int64(bitrate)
        guard codec != .av1 else { return }
        ctx.pointee.rc_max_rate = Int64(bitrate)
        ctx.pointee.rc_buffer_size = Int32(clamping: bitrate)
    }

    /// Takes effect from the next frame on.
    func setBitrate(_ newValue: Int) {
        guard newValue != bitrate else { return }
        bitrate = newValue
        let codec = settings.codec
        encoder.reconfigure { Self.applyBitrate(newValue, codec: codec, to: $0) }
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
            if settings.codec == .hevc {
                data = AnnexBConverter.startsWithStartCode(bytes) ? HEVCConfiguration.lengthPrefixed(fromAnnexB: bytes) : Array(bytes)
                summary = .init(isReference: true, hasIDR: false)
            } else if settings.codec == .av1 {
                data = AV1Configuration.samples(from: bytes)
                summary = .init(isReference: true, hasIDR: false)
            } else if AnnexBConverter.startsWithStartCode(bytes) {
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
