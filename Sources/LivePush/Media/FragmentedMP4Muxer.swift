import CFFmpeg

/// CMAF (fragmented MP4) in memory, with libavformat's mp4 muxer: the init segment (`ftyp` and
/// an empty `moov`) once, then one fragment (`moof` and `mdat`, every track's samples since the
/// last cut) each time the caller cuts. What an HLS output writes for `hls_segment_type=fmp4`
/// (the init segment is the playlist's `#EXT-X-MAP`), or any other segmenter.
///
/// The caller decides the cuts (a fragment should start with a video keyframe) and hands
/// coded frames in decode order per track, stamped in microseconds on one clock; across tracks
/// any order will do (the muxer does not interleave, it groups each fragment's samples by
/// track). Each frame's duration (``MediaPacket/duration``) closes a fragment's last sample.
/// A new codec configuration needs a new muxer (and a new init segment).
///
/// Owned by one output: not thread-safe. Everything it writes stays in memory: the only I/O is
/// the caller's.
final class FragmentedMP4Muxer {
    /// `ftyp` and `moov`: what every fragment needs before it.
    private(set) var initSegment: [UInt8] = []

    private var context: UnsafeMutablePointer<AVFormatContext>?
    private let sink: WrittenBytes
    private let packet: UnsafeMutablePointer<AVPacket>
    private var videoIndex: Int32?
    private var audioIndex: Int32?
    /// Samples written since the last cut.
    private var pending = 0

    /// Where libavformat's writes land, through an AVIO context that cannot seek (so the mp4
    /// muxer never goes back to patch a box).
    private final class WrittenBytes {
        var bytes: [UInt8] = []
    }

    /// A muxer for `stream`'s tracks: H.264, HEVC or AV1 video (its configuration record is
    /// the sample entry's), AAC audio (its AudioSpecificConfig). Throws `outputSettingsInvalid`
    /// for a stream CMAF cannot carry here.
    ///
    /// `keepsTimestamps`: the fragments' decode times (`tfdt`) are the packets' own, which must
    /// then not be negative (an HLS output puts its fragments on the MPEG-TS timeline, output
    /// time + 1.4 s, so that a cue tag's `pts_adjustment` reads the same in both segment types,
    /// and a new muxer after a configuration change goes on where the last one ended); otherwise
    /// they count from the first packet's, as libavformat does by default.
    init(stream: StreamInfo, keepsTimestamps: Bool = false) throws(LivePushError) {
        _ = FF.quietLogging
        guard let packet = av_packet_alloc() else { throw LivePushError(.outOfMemory, "av_packet_alloc") }
        self.packet = packet
        sink = WrittenBytes()
        var made: UnsafeMutablePointer<AVFormatContext>?
        let rc = avformat_alloc_output_context2(&made, nil, "mp4", nil)
        guard rc >= 0, let context = made else {
            throw LivePushError(.outputSettingsInvalid, "the mp4 muxer is missing: \(FF.describe(rc))")
        }
        self.context = context
        if let video = stream.video {
            videoIndex = try addVideo(video, to: context)
        }
        if let audio = stream.audio {
            audioIndex = try addAudio(audio, to: context)
        }
        guard videoIndex != nil || audioIndex != nil else {
            throw LivePushError(.outputSettingsInvalid, "fragmented MP4 needs a video or an audio track")
        }
        try openOutput(context, keepsTimestamps: keepsTimestamps)
        initSegment = takeBytes()
    }

    deinit {
        if let context {
            if let pb = context.pointee.pb {
                av_freep(&pb.pointee.buffer)
                var owned: UnsafeMutablePointer<AVIOContext>? = pb
                avio_context_free(&owned)
                context.pointee.pb = nil
            }
            avformat_free_context(context)
        }
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
    }

    /// Adds a coded frame to the current fragment. Headers, cues and data messages are not
    /// samples and are ignored; so is a track the muxer was not made with.
    func write(_ media: MediaPacket) throws(LivePushError) {
        guard !media.isSequenceHeader, !media.data.isEmpty, let context else { return }
        let index: Int32
        switch media.kind {
        case .video: guard let videoIndex else { return }; index = videoIndex
        case .audio: guard let audioIndex else { return }; index = audioIndex
        case .data, .cue: return
        }
        try FF.load(media, into: packet)
        let timeBase = context.pointee.streams[Int(index)]!.pointee.time_base
        packet.pointee.stream_index = index
        packet.pointee.dts = av_rescale_q(media.dts, FF.microsTimeBase, timeBase)
        packet.pointee.pts = av_rescale_q(media.pts, FF.microsTimeBase, timeBase)
        packet.pointee.duration = av_rescale_q(media.duration, FF.microsTimeBase, timeBase)
        let rc = av_write_frame(context, packet)
        guard rc >= 0 else {
            throw LivePushError(.outputSettingsInvalid, "fragmented MP4 refused a \(media.kind) frame at \(media.dts) µs: \(FF.describe(rc))")
        }
        pending += 1
    }

    /// Ends the current fragment and returns it (`moof` and `mdat`); empty when no sample came
    /// since the last cut.
    func cut() throws(LivePushError) -> [UInt8] {
        guard pending > 0, let context else { return [] }
        pending = 0
        // frag_custom: a null packet flushes the fragment.
        let rc = av_write_frame(context, nil)
        guard rc >= 0 else { throw LivePushError(.outputSettingsInvalid, "fragmented MP4 could not end a fragment: \(FF.describe(rc))") }
        avio_flush(context.pointee.pb)
        return takeBytes()
    }

    private func takeBytes() -> [UInt8] {
        defer { sink.bytes.removeAll(keepingCapacity: true) }
        return sink.bytes
    }

    private func addVideo(_ video: VideoTrackInfo, to context: UnsafeMutablePointer<AVFormatContext>) throws(LivePushError) -> Int32 {
        let codec: AVCodecID = switch video.codec {
        case .h264: AV_CODEC_ID_H264
        case .hevc: AV_CODEC_ID_HEVC
        case .av1: AV_CODEC_ID_AV1
        case .vp9: AV_CODEC_ID_VP9
        }
        guard !video.decoderConfiguration.isEmpty || video.codec == .vp9 else {
            throw LivePushError(.outputSettingsInvalid, "fragmented MP4 needs the \(video.codec.rawValue) configuration record")
        }
        let stream = try newStream(in: context)
        stream.pointee.time_base = AVRational(num: 1, den: 90_000)
        let parameters = stream.pointee.codecpar!
        parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        parameters.pointee.codec_id = codec
        parameters.pointee.width = Int32(video.width)
        parameters.pointee.height = Int32(video.height)
        try setExtradata(video.decoderConfiguration, of: parameters)
        if video.frameRate > 0 {
            stream.pointee.avg_frame_rate = av_d2q(video.frameRate, 1_000_000)
        }
        return stream.pointee.index
    }

    private func addAudio(_ audio: AudioTrackInfo, to context: UnsafeMutablePointer<AVFormatContext>) throws(LivePushError) -> Int32 {
        guard audio.sampleRate > 0, (1...8).contains(audio.channels) else {
            throw LivePushError(.outputSettingsInvalid, "fragmented MP4 cannot carry AAC at \(audio.sampleRate) Hz, \(audio.channels) channels")
        }
        let stream = try newStream(in: context)
        stream.pointee.time_base = AVRational(num: 1, den: Int32(audio.sampleRate))
        let parameters = stream.pointee.codecpar!
        parameters.pointee.codec_type = AVMEDIA_TYPE_AUDIO
        parameters.pointee.codec_id = AV_CODEC_ID_AAC
        parameters.pointee.sample_rate = Int32(audio.sampleRate)
        parameters.pointee.frame_size = 1024
        parameters.pointee.bit_rate = Int64(audio.bitrate)
        av_channel_layout_default(&parameters.pointee.ch_layout, Int32(audio.channels))
        try setExtradata(audio.audioSpecificConfig, of: parameters)
        return stream.pointee.index
    }

    private func newStream(in context: UnsafeMutablePointer<AVFormatContext>) throws(LivePushError) -> UnsafeMutablePointer<AVStream> {
        guard let stream = avformat_new_stream(context, nil) else { throw LivePushError(.outOfMemory, "avformat_new_stream") }
        return stream
    }

    private func setExtradata(_ bytes: [UInt8], of parameters: UnsafeMutablePointer<AVCodecParameters>) throws(LivePushError) {
        guard !bytes.isEmpty else { return }
        guard let buffer = av_mallocz(bytes.count + Int(AV_INPUT_BUFFER_PADDING_SIZE))?.assumingMemoryBound(to: UInt8.self) else {
            throw LivePushError(.outOfMemory, "av_mallocz")
        }
        buffer.update(from: bytes, count: bytes.count)
        parameters.pointee.extradata = buffer
        parameters.pointee.extradata_size = Int32(bytes.count)
    }

    /// The AVIO context that appends to ``sink``, and the header: CMAF brands, an empty `moov`
    /// (the samples go in fragments), fragments only where the caller cuts, each `moof`
    /// addressing its own `mdat` (default-base-is-moof, as CMAF requires).
    private func openOutput(_ context: UnsafeMutablePointer<AVFormatContext>, keepsTimestamps: Bool) throws(LivePushError) {
        let size = 64 * 1024
        guard let buffer = av_malloc(size)?.assumingMemoryBound(to: UInt8.self) else { throw LivePushError(.outOfMemory, "av_malloc") }
        let opaque = Unmanaged.passUnretained(sink).toOpaque()
        guard let pb = avio_alloc_context(buffer, Int32(size), 1, opaque, nil, { opaque, bytes, count in
            guard let opaque, let bytes, count > 0 else { return 0 }
            let sink = Unmanaged<WrittenBytes>.fromOpaque(opaque).takeUnretainedValue()
            sink.bytes.append(contentsOf: UnsafeBufferPointer(start: bytes, count: Int(count)))
            return count
        }, nil) else {
            av_free(buffer)
            throw LivePushError(.outOfMemory, "avio_alloc_context")
        }
        pb.pointee.seekable = 0
        context.pointee.pb = pb
        var options: OpaquePointer?
        if keepsTimestamps {
            // Left alone, the fragmented mp4 muxer shifts the first timestamp to zero (it turns
            // avoid_negative_ts to make_zero); frag_discont makes the first fragment's tfdt the
            // first packet's own decode time, and the later ones follow on from it.
            context.pointee.avoid_negative_ts = AVFMT_AVOID_NEG_TS_DISABLED
            av_dict_set(&options, "use_editlist", "0", 0)
        }
        let flags = "+cmaf+frag_custom+empty_moov+default_base_moof+skip_trailer" + (keepsTimestamps ? "+frag_discont" : "")
        av_dict_set(&options, "movflags", flags, 0)
        defer { av_dict_free(&options) }
        let rc = avformat_write_header(context, &options)
        guard rc >= 0 else {
            throw LivePushError(.outputSettingsInvalid, "fragmented MP4 cannot carry this stream: \(FF.describe(rc))")
        }
        avio_flush(pb)
    }
}
