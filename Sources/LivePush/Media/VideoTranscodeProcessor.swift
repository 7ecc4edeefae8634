import CFFmpeg

/// Decodes any video libavcodec can decode and re-encodes it to H.264 (libx264 with preset
/// veryfast and tune zerolatency, else any other H.264 encoder), keeping the source's size
/// (rounded down to even) and frame rate. Output is AVCC with an avcC built from the
/// encoder's global header.
final class VideoTranscodeProcessor: VideoPacketProcessor {
    let streamIndex: Int32
    let kind = MediaPacket.Kind.video
    private let stream: DemuxedStream
    private let options: MediaSourceOptions
    private let decoder: FFDecoder
    private var encoder: FFEncoder
    private let width: Int32
    private let height: Int32
    private let frameRate: AVRational
    private let bitrate: Int
    private let record: [UInt8]
    private var scaler: OpaquePointer?
    private let scaled: UnsafeMutablePointer<AVFrame>
    /// Last pts sent to the encoder (stream time base), to keep them strictly increasing.
    private var lastPts: Int64?

    init(stream: DemuxedStream, demuxer: FFDemuxer, options: MediaSourceOptions) throws(LivePushError) {
        guard let parameters = demuxer.codecParameters(of: stream.index) else {
            throw LivePushError(.noUsableStream, "video stream \(stream.index)")
        }
        self.stream = stream
        self.options = options
        streamIndex = stream.index
        decoder = try FFDecoder(parameters: parameters, timeBase: stream.timeBase)
        guard stream.width >= 2, stream.height >= 2 else {
            throw LivePushError(.transcodeFailed, "video size of \(stream.codecName) stream unknown")
        }
        width = Int32(stream.width & ~1)
        height = Int32(stream.height & ~1)
        let fps = stream.frameRateRational
        frameRate = (fps.num > 0 && fps.den > 0 && stream.frameRate <= 240) ? fps : AVRational(num: 25, den: 1)
        bitrate = options.resolvedVideoBitrate(width: Int(width), height: Int(height))
        guard let frame = av_frame_alloc() else { throw LivePushError(.outOfMemory, "av_frame_alloc") }
        scaled = frame
        encoder = try Self.makeEncoder(width: width, height: height, frameRate: frameRate, timeBase: stream.timeBase,
                                       bitrate: bitrate, gopSeconds: options.gopSeconds)
        let extradata = encoder.extradata
        if AVCCFormat.parseDecoderConfiguration(extradata) != nil {
            record = AVCCFormat.withFourByteLengths(extradata)
        } else if let built = AnnexBConverter.decoderConfigurationRecord(fromAnnexB: extradata) {
            record = built
        } else {
            throw LivePushError(.encoderUnavailable, "\(encoder.name) gave no SPS/PPS")
        }
    }

    deinit {
        var f: UnsafeMutablePointer<AVFrame>? = scaled
        av_frame_free(&f)
        sws_freeContext(scaler)
    }

    private static func makeEncoder(
        width: Int32, height: Int32, frameRate: AVRational, timeBase: AVRational, bitrate: Int, gopSeconds: Double
    ) throws(LivePushError) -> FFEncoder {
        guard let codec = avcodec_find_encoder_by_name("libx264") ?? avcodec_find_encoder(AV_CODEC_ID_H264) else {
            throw LivePushError(.encoderUnavailable, "no H.264 encoder")
        }
        let fps = FF.double(frameRate)
        return try FFEncoder(codec: codec, privateOptions: [("preset", "veryfast"), ("tune", "zerolatency")]) { ctx in
            ctx.pointee.width = width
            ctx.pointee.height = height
            ctx.pointee.pix_fmt = AV_PIX_FMT_YUV420P
            ctx.pointee.time_base = timeBase
            ctx.pointee.framerate = frameRate
            ctx.pointee.gop_size = Int32(max(1, (gopSeconds * fps).rounded()))
            ctx.pointee.max_b_frames = 0
            ctx.pointee.bit_rate = Int64(bitrate)
            ctx.pointee.rc_max_rate = Int64(bitrate)
            ctx.pointee.rc_buffer_size = Int32(clamping: bitrate)
            ctx.pointee.thread_count = 2
        }
    }

    var isConfigured: Bool { true }

    var trackInfo: VideoTrackInfo? {
        VideoTrackInfo(width: Int(width), height: Int(height), frameRate: FF.double(frameRate), bitrate: bitrate,
                       decoderConfiguration: record)
    }

    func process(_ packet: UnsafeMutablePointer<AVPacket>, into out: inout [MediaPacket]) throws(LivePushError) {
        try decoder.send(packet)
        while try decoder.receive() { try encode(decoder.frame, into: &out) }
    }

    func finish(into out: inout [MediaPacket]) throws(LivePushError) {
        try decoder.send(nil)
        while try decoder.receive() { try encode(decoder.frame, into: &out) }
        try encoder.send(nil)
        try drain(into: &out)
    }

    func reset() throws(LivePushError) {
        decoder.flush()
        lastPts = nil
        // Encoders cannot restart their timeline; a fresh one is cheap and keeps the same SPS/PPS.
        encoder = try Self.makeEncoder(width: width, height: height, frameRate: frameRate, timeBase: stream.timeBase,
                                       bitrate: bitrate, gopSeconds: options.gopSeconds)
    }

    private func encode(_ frame: UnsafeMutablePointer<AVFrame>, into out: inout [MediaPacket]) throws(LivePushError) {
        // One frame duration in the stream time base, for filling gaps.
        let step = max(1, av_rescale_q(1, AVRational(num: frameRate.den, den: frameRate.num), stream.timeBase))
        var pts = frame.pointee.best_effort_timestamp != FF.noPTS ? frame.pointee.best_effort_timestamp : frame.pointee.pts
        if pts == FF.noPTS { pts = (lastPts ?? -step) + step }
        if let lastPts, pts <= lastPts { pts = lastPts + 1 }
        lastPts = pts

        let source: UnsafeMutablePointer<AVFrame>
        if frame.pointee.format == AV_PIX_FMT_YUV420P.rawValue && frame.pointee.width == width && frame.pointee.height == height {
            source = frame
        } else {
            try scale(frame)
            source = scaled
        }
        source.pointee.pts = pts
        source.pointee.pict_type = AV_PICTURE_TYPE_NONE
        try encoder.send(source)
        try drain(into: &out)
    }

    private func scale(_ frame: UnsafeMutablePointer<AVFrame>) throws(LivePushError) {
        let f = frame.pointee
        scaler = sws_getCachedContext(scaler, f.width, f.height, AVPixelFormat(f.format),
                                      width, height, AV_PIX_FMT_YUV420P, SWS_BILINEAR, nil, nil, nil)
        guard let scaler else { throw LivePushError(.transcodeFailed, "no pixel format conversion from format \(f.format)") }
        if scaled.pointee.data.0 == nil {
            scaled.pointee.format = AV_PIX_FMT_YUV420P.rawValue
            scaled.pointee.width = width
            scaled.pointee.height = height
            let rc = av_frame_get_buffer(scaled, 0)
            guard rc >= 0 else { throw LivePushError(.outOfMemory, "av_frame_get_buffer: \(FF.describe(rc))") }
        }
        let rc = av_frame_make_writable(scaled)
        guard rc >= 0 else { throw LivePushError(.outOfMemory, "av_frame_make_writable: \(FF.describe(rc))") }
        let srcData = UnsafeRawPointer(frame).advanced(by: MemoryLayout<AVFrame>.offset(of: \AVFrame.data)!)
            .assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
        let srcStride = UnsafeRawPointer(frame).advanced(by: MemoryLayout<AVFrame>.offset(of: \AVFrame.linesize)!)
            .assumingMemoryBound(to: Int32.self)
        let dstData = UnsafeMutableRawPointer(scaled).advanced(by: MemoryLayout<AVFrame>.offset(of: \AVFrame.data)!)
            .assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self)
        let dstStride = UnsafeRawPointer(scaled).advanced(by: MemoryLayout<AVFrame>.offset(of: \AVFrame.linesize)!)
            .assumingMemoryBound(to: Int32.self)
        let lines = sws_scale(scaler, srcData, srcStride, 0, f.height, dstData, dstStride)
        guard lines > 0 else { throw LivePushError(.transcodeFailed, "pixel format conversion failed") }
    }

    private func drain(into out: inout [MediaPacket]) throws(LivePushError) {
        while try encoder.receive() {
            let pkt = encoder.packet.pointee
            guard let base = pkt.data, pkt.size > 0 else { continue }
            let bytes = UnsafeBufferPointer(start: base, count: Int(pkt.size))
            let tb = encoder.timeBase
            let dts = FF.micros(pkt.dts, tb) ?? FF.micros(pkt.pts, tb) ?? 0
            let pts = max(FF.micros(pkt.pts, tb) ?? dts, dts)
            let duration = pkt.duration > 0 ? (FF.micros(pkt.duration, tb) ?? 0) : Int64(1_000_000 / max(1, FF.double(frameRate)))
            let data: [UInt8]
            let summary: AnnexBConverter.FrameSummary
            if AnnexBConverter.startsWithStartCode(bytes) {
                (data, summary) = AnnexBConverter.avcc(fromAnnexB: bytes, dropParameterSets: true)
            } else {
                data = Array(bytes)
                summary = AVCCFormat.summarize(bytes, lengthSize: 4) ?? .init(isReference: true, hasIDR: false)
            }
            let isKey = pkt.flags & livepush_av_pkt_flag_key() != 0
            out.append(MediaPacket(kind: .video, data: data, dts: dts, pts: pts, duration: duration,
                                   importance: isKey ? .key : (summary.isReference ? .reference : .disposable)))
        }
    }
}
