import CFFmpeg
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Owns an AVFormatContext opened on a local file (or, for the path `-`, standard input) and the
/// one AVPacket reused for reading.
final class FFDemuxer {
    /// The path that means standard input: any container libavformat can read from a pipe.
    static let standardInput = "-"

    let path: String
    private var context: UnsafeMutablePointer<AVFormatContext>?
    /// The packet `read()` fills; valid until the next `read()`.
    let packet: UnsafeMutablePointer<AVPacket>
    private(set) var streams: [DemuxedStream] = []
    /// A regular file: reading it never waits for a writer (unlike a pipe, a FIFO or a device).
    let isRegularFile: Bool
    /// What a demuxer over a ``DemuxerByteSource`` reads, and the AVIO context reading it
    /// (freed here: libavformat leaves a custom one to its owner).
    private(set) var byteSource: (any DemuxerByteSource)?
    private var sourceBox: DemuxerByteSourceBox?
    private var customIO: UnsafeMutablePointer<AVIOContext>?

    /// Opens and probes `path`. Runs avformat_find_stream_info only when the container header
    /// lacks something this layer needs (typical for MPEG-TS), with modest probe limits.
    init(path: String) throws(LivePushError) {
        self.path = path
        FF.quietLogging
        let isStandardInput = path == Self.standardInput
        var st = stat()
        guard isStandardInput
                || (!path.isEmpty && stat(path, &st) == 0 && (st.st_mode & S_IFMT) != S_IFDIR && access(path, R_OK) == 0) else {
            throw LivePushError(.fileNotFound, path)
        }
        isRegularFile = !isStandardInput && (st.st_mode & S_IFMT) == S_IFREG
        guard let pkt = av_packet_alloc() else { throw LivePushError(.outOfMemory, "av_packet_alloc") }
        packet = pkt
        var ctx: UnsafeMutablePointer<AVFormatContext>? = nil
        // "file:" keeps names with a colon from being taken for another protocol; the policy
        // keeps the input from opening any other (see FFInputPolicy).
        var options = FFInputPolicy.options(protocols: isStandardInput ? FFInputPolicy.standardInputProtocols
                                                                       : FFInputPolicy.localFileProtocols)
        defer { av_dict_free(&options) }
        let rc = avformat_open_input(&ctx, isStandardInput ? "pipe:0" : "file:" + path, nil, &options)
        guard rc >= 0, let ctx else {
            throw LivePushError(.notMedia, "\(path): \(FF.describe(rc))")
        }
        context = ctx
        // MP4 and QuickTime store whole frames with their times and keyframe marks: the H.264
        // parser libavformat would run over them adds nothing and keeps ~170 KiB per input
        // (a thousand channels: 170 MiB).
        if let name = ctx.pointee.iformat?.pointee.name, String(cString: name).hasPrefix("mov,") {
            ctx.pointee.flags |= AVFMT_FLAG_NOPARSE
        }
        refreshStreams()
        if needsStreamInfo {
            ctx.pointee.probesize = 2 << 20
            ctx.pointee.max_analyze_duration = 2 * Int64(AV_TIME_BASE)
            let rc = avformat_find_stream_info(ctx, nil)
            guard rc >= 0 else { throw LivePushError(.notMedia, "\(path): \(FF.describe(rc))") }
            refreshStreams()
        }
    }

    /// Opens a live input URL (``FFInputPolicy/liveProtocols(for:)``). Every blocking call runs
    /// under `interrupt`, armed for `timeout`: a feed that does not answer (or a publisher that
    /// is not there yet) ends in `mediaReadFailed` rather than a hang. The URL's secrets are
    /// masked in every error.
    /// `followsReferences` false: an http(s) URL follows no redirect and is not read as a playlist.
    init(url: String, timeout: Duration, interrupt: IOInterrupt, followsReferences: Bool = true) throws(LivePushError) {
        FF.quietLogging
        let name = Self.redacted(url)
        path = name
        isRegularFile = false
        guard let protocols = FFInputPolicy.liveProtocols(for: url) else { throw LivePushError(.invalidURL, "\(name): not a live input URL") }
        guard let pkt = av_packet_alloc() else { throw LivePushError(.outOfMemory, "av_packet_alloc") }
        packet = pkt
        guard let ctx = avformat_alloc_context() else { throw LivePushError(.outOfMemory, "avformat_alloc_context") }
        ctx.pointee.interrupt_callback = interrupt.callback
        let micros = max(1000, timeout.nanoseconds / 1000)
        var options = FFInputPolicy.options(protocols: protocols, playlists: followsReferences && url.lowercased().hasPrefix("http"))
        defer { av_dict_free(&options) }
        if !followsReferences { av_dict_set(&options, "max_redirects", "0", 0) }
        av_dict_set(&options, "rw_timeout", String(micros), 0)
        // A live source is read as it comes: no buffering ahead beyond what probing needs.
        av_dict_set(&options, "fflags", "nobuffer", 0)
        interrupt.arm(micros: micros)
        var opened: UnsafeMutablePointer<AVFormatContext>? = ctx
        var rc = avformat_open_input(&opened, url, nil, &options)  // frees ctx on failure
        guard rc >= 0, let opened else {
            interrupt.disarm()
            throw Self.liveFailure(rc, name, interrupt)
        }
        context = opened
        opened.pointee.probesize = 1 << 20
        opened.pointee.max_analyze_duration = Int64(AV_TIME_BASE)
        interrupt.arm(micros: micros)
        rc = avformat_find_stream_info(opened, nil)
        interrupt.disarm()
        guard rc >= 0 else { throw Self.liveFailure(rc, name, interrupt) }
        refreshStreams()
    }

    /// Opens and probes what `source` hands out (an HLS input's segments, MPEG-TS), read
    /// through a custom AVIO context; `name` stands for it in errors. The probe reads half a
    /// second of media at most, so that it does not wait for the next segment of a live
    /// playlist; the source's own waits bound every call.
    init(source: any DemuxerByteSource, name: String) throws(LivePushError) {
        FF.quietLogging
        path = name
        isRegularFile = false
        guard let pkt = av_packet_alloc() else { throw LivePushError(.outOfMemory, "av_packet_alloc") }
        packet = pkt
        let box = DemuxerByteSourceBox(source)
        byteSource = source
        sourceBox = box
        let size = 64 * 1024
        guard let buffer = av_malloc(size) else { throw LivePushError(.outOfMemory, "av_malloc") }
        guard let io = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), Int32(size), 0,
                                          Unmanaged.passUnretained(box).toOpaque(), { DemuxerByteSourceBox.read($0, $1, $2) }, nil, nil) else {
            av_free(buffer)
            throw LivePushError(.outOfMemory, "avio_alloc_context")
        }
        customIO = io
        guard let ctx = avformat_alloc_context() else { throw LivePushError(.outOfMemory, "avformat_alloc_context") }
        ctx.pointee.pb = io
        ctx.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        var options = FFInputPolicy.options(protocols: "")
        defer { av_dict_free(&options) }
        var opened: UnsafeMutablePointer<AVFormatContext>? = ctx
        var rc = avformat_open_input(&opened, "", nil, &options)  // frees ctx (not the AVIO) on failure
        guard rc >= 0, let opened else { throw LivePushError(.notMedia, "\(name): \(FF.describe(rc))") }
        context = opened
        opened.pointee.probesize = 1 << 20
        opened.pointee.max_analyze_duration = Int64(AV_TIME_BASE) / 2
        rc = avformat_find_stream_info(opened, nil)
        guard rc >= 0 else { throw LivePushError(.notMedia, "\(name): \(FF.describe(rc))") }
        refreshStreams()
    }

    /// A live input's URL as it may be shown: credentials and the stream name masked.
    static func redacted(_ url: String) -> String {
        Redaction.redactStreamKey(url)
    }

    private static func liveFailure(_ rc: Int32, _ name: String, _ interrupt: IOInterrupt) -> LivePushError {
        if interrupt.didExpire || rc == livepush_averror(ETIMEDOUT) {
            return LivePushError(.mediaReadFailed, "\(name): no media within the input timeout")
        }
        return LivePushError(.mediaReadFailed, "\(name): \(FF.describe(rc))")
    }

    deinit {
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
        if context != nil { avformat_close_input(&context) }
        if let io = customIO {
            av_freep(&io.pointee.buffer)
            var freed: UnsafeMutablePointer<AVIOContext>? = io
            avio_context_free(&freed)
        }
    }

    private var needsStreamInfo: Bool {
        guard let ctx = context else { return false }
        if ctx.pointee.nb_streams == 0 || ctx.pointee.ctx_flags & Int32(AVFMTCTX_NOHEADER) != 0 { return true }
        // Only the streams that would be used matter.
        let video = streams.first { $0.mediaType == .video && !$0.isAttachedPicture }
        let audio = streams.first { $0.mediaType == .audio }
        return !(video?.hasEssentialParameters ?? true) || !(audio?.hasEssentialParameters ?? true)
    }

    private func refreshStreams() {
        guard let ctx = context, let list = ctx.pointee.streams else { streams = []; return }
        streams = (0..<Int(ctx.pointee.nb_streams)).compactMap { i in list[i].map(DemuxedStream.init) }
    }

    /// Total duration in microseconds, 0 when unknown.
    var durationMicros: Int64 {
        guard let ctx = context, ctx.pointee.duration != FF.noPTS, ctx.pointee.duration > 0 else { return 0 }
        return ctx.pointee.duration
    }

    /// Container-level bitrate, bit/s (0 when unknown).
    var bitrate: Int { Int(max(0, context?.pointee.bit_rate ?? 0)) }

    /// The codec parameters of stream `index`, for opening a decoder.
    func codecParameters(of index: Int32) -> UnsafePointer<AVCodecParameters>? {
        guard let ctx = context, index >= 0, index < Int32(ctx.pointee.nb_streams),
              let st = ctx.pointee.streams[Int(index)] else { return nil }
        return UnsafePointer(st.pointee.codecpar)
    }

    /// The presentation time (µs) of the packet `read()` filled, in its stream's time base; nil
    /// when it has none.
    var packetMicros: Int64? {
        let index = Int(packet.pointee.stream_index)
        guard streams.indices.contains(index) else { return nil }
        return FF.micros(packet.pointee.pts, streams[index].timeBase)
    }

    /// The byte position in the input of the packet `read()` filled (-1 when unknown).
    var packetPosition: Int64 { packet.pointee.pos }

    /// The bytes of the packet `read()` filled.
    var packetBytes: [UInt8] {
        guard let data = packet.pointee.data, packet.pointee.size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(packet.pointee.size)))
    }

    /// Reads the next packet into `packet`. False at the end of the file.
    func read() throws(LivePushError) -> Bool {
        guard let ctx = context else { return false }
        av_packet_unref(packet)
        let rc = av_read_frame(ctx, packet)
        if rc >= 0 { return true }
        if rc == FF.eof { return false }
        if let pb = ctx.pointee.pb, pb.pointee.eof_reached != 0 { return false }
        throw LivePushError(.mediaReadFailed, "\(path): \(FF.describe(rc))")
    }

    /// Seeks to the keyframe at or before `micros` (file time, from the file's start).
    func seek(toMicros micros: Int64) -> Bool {
        guard let ctx = context else { return false }
        av_packet_unref(packet)
        let start = ctx.pointee.start_time != FF.noPTS ? ctx.pointee.start_time : 0
        return avformat_seek_file(ctx, -1, Int64.min, start + micros, start + micros, 0) >= 0
    }

    /// Seeks to the start of the file. Formats with timestamp discontinuities (MPEG-TS) are
    /// rewound by byte position, others by timestamp. False when the seek failed.
    func seekToStart() -> Bool {
        guard let ctx = context else { return false }
        av_packet_unref(packet)
        let iformat = ctx.pointee.iformat.pointee
        let byteSeekable = iformat.flags & AVFMT_NO_BYTE_SEEK == 0
        if iformat.flags & AVFMT_TS_DISCONT != 0, byteSeekable {
            if av_seek_frame(ctx, -1, 0, AVSEEK_FLAG_BYTE) >= 0 { return true }
        }
        let start = ctx.pointee.start_time != FF.noPTS ? ctx.pointee.start_time : 0
        if avformat_seek_file(ctx, -1, Int64.min, start, start, 0) >= 0 { return true }
        if av_seek_frame(ctx, -1, start, AVSEEK_FLAG_BACKWARD) >= 0 { return true }
        return byteSeekable && av_seek_frame(ctx, -1, 0, AVSEEK_FLAG_BYTE) >= 0
    }
}
