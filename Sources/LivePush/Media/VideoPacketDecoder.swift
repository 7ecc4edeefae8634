import CFFmpeg

/// Decodes video ``MediaPacket``s (H.264 or HEVC length-prefixed, AV1 or VP9 as MP4 holds them,
/// stamped on the output clock) back into pictures:
/// the one decode that the renditions after the clock share (``RenditionStage``).
///
/// Packets go in with their output times (µs) and pictures come out in presentation order
/// with the same times. Pictures in a layout the scaler cannot take directly are converted to
/// I420 at their own size.
final class VideoPacketDecoder {
    /// The configuration record (avcC, hvcC, av1C, vpcC) the decoder was opened with.
    let configuration: [UInt8]
    private let decoder: FFDecoder
    private let packet: UnsafeMutablePointer<AVPacket>
    private var converter: FrameScaler?
    private var lastTime: Int64?

    init(configuration: [UInt8], codec: VideoCodec = .h264) throws(LivePushError) {
        self.configuration = configuration
        guard let parameters = avcodec_parameters_alloc() else { throw LivePushError(.outOfMemory, "avcodec_parameters_alloc") }
        var owned: UnsafeMutablePointer<AVCodecParameters>? = parameters
        defer { avcodec_parameters_free(&owned) }
        parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        parameters.pointee.codec_id = switch codec {
        case .h264: AV_CODEC_ID_H264
        case .hevc: AV_CODEC_ID_HEVC
        case .av1: AV_CODEC_ID_AV1
        case .vp9: AV_CODEC_ID_VP9
        }
        // The record goes in as extradata (zero-padded, as libavcodec reads past its end).
        let padded = Int(AV_INPUT_BUFFER_PADDING_SIZE)
        guard let extradata = av_mallocz(configuration.count + padded)?.assumingMemoryBound(to: UInt8.self) else {
            throw LivePushError(.outOfMemory, "av_mallocz")
        }
        extradata.update(from: configuration, count: configuration.count)
        parameters.pointee.extradata = extradata
        parameters.pointee.extradata_size = Int32(configuration.count)
        decoder = try FFDecoder(parameters: parameters, timeBase: FF.microsTimeBase)
        guard let pkt = av_packet_alloc() else { throw LivePushError(.outOfMemory, "av_packet_alloc") }
        packet = pkt
    }

    deinit {
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
    }

    /// Decodes one coded frame; appends the pictures it completes.
    func decode(_ media: MediaPacket, into pictures: inout [VideoFrame]) throws(LivePushError) {
        try FF.load(media, into: packet)
        try decoder.send(packet)
        try receive(into: &pictures)
    }

    /// The pictures the decoder still holds (the end of the stream, or a new configuration).
    func drain(into pictures: inout [VideoFrame]) throws(LivePushError) {
        try decoder.send(nil)
        try receive(into: &pictures)
    }

    private func receive(into pictures: inout [VideoFrame]) throws(LivePushError) {
        while try decoder.receive() {
            let decoded = decoder.frame
            let raw = decoded.pointee.best_effort_timestamp != FF.noPTS ? decoded.pointee.best_effort_timestamp : decoded.pointee.pts
            var time = raw != FF.noPTS ? raw : (lastTime ?? 0) + 1
            if let last = lastTime, time <= last { time = last + 1 }
            lastTime = time
            if let picture = try VideoFrame(referencing: decoded, timestamp: time) {
                pictures.append(picture)
                continue
            }
            if converter == nil {
                converter = try FrameScaler(width: Int(decoded.pointee.width) & ~1, height: Int(decoded.pointee.height) & ~1)
            }
            if let converter, let picture = try VideoFrame(referencing: converter.scale(decoded), timestamp: time) {
                pictures.append(picture)
            }
        }
    }
}
