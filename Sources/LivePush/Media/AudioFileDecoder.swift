import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif

/// Opens a local file or an http(s) URL with libavformat, decodes its first audio stream
/// (any codec libavcodec has: MP3, AAC, WAV, FLAC, Opus, ...) and resamples it with
/// libswresample to the mixing format. A thin wrapper: used on one thread, a player's.
///
/// Every blocking network call runs under a deadline of `timeout` (the interrupt callback,
/// plus libavformat's own `rw_timeout`), so a stalled server ends in `bgmDownloadTimeout`
/// instead of a hang; `interrupt.cancel()` aborts at once.
final class AudioFileDecoder {
    let source: String
    let isNetwork: Bool
    /// Container duration in microseconds, 0 when unknown (live or unsized HTTP).
    private(set) var duration: Int64 = 0
    private var context: UnsafeMutablePointer<AVFormatContext>?
    private let packet: UnsafeMutablePointer<AVPacket>
    private var decoder: FFDecoder!
    private var streamIndex: Int32 = -1
    private let interrupt: IOInterrupt
    private let timeout: Int64
    private var resampler: FFResampler?
    private var draining = false

    static func isNetworkSource(_ source: String) -> Bool {
        let lower = source.lowercased()
        return lower.hasPrefix("http://") || lower.hasPrefix("https://")
    }

    /// Opens and probes `source`; throws `bgmOpenFailed` (missing, not audio, no decoder) or
    /// `bgmDownloadTimeout` (a network source that did not answer within `timeout`).
    init(source: String, timeout: Duration, interrupt: IOInterrupt) throws(LivePushError) {
        FF.quietLogging
        self.source = source
        self.interrupt = interrupt
        self.timeout = max(1000, timeout.nanoseconds / 1000)
        isNetwork = Self.isNetworkSource(source)
        guard let packet = av_packet_alloc() else { throw LivePushError(.outOfMemory, "audio decoder buffers") }
        self.packet = packet
        let url = try Self.openableURL(source, isNetwork: isNetwork)
        try open(url)
    }

    deinit {
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
        if context != nil { avformat_close_input(&context) }
    }

    /// What libavformat is given: URLs as they are, local paths checked first (a clear
    /// reason beats libavformat's "No such file or directory") and prefixed with `file:`.
    private static func openableURL(_ source: String, isNetwork: Bool) throws(LivePushError) -> String {
        if isNetwork { return source }
        guard !source.isEmpty else { throw LivePushError(.bgmOpenFailed, "no source given") }
        var path = source
        if path.hasPrefix("file://") { path.removeFirst("file://".count) }
        if path.contains("://") {
            throw LivePushError(.bgmOpenFailed, "\(Redaction.redactURL(source)): only local files and http(s) URLs are supported")
        }
        var st = stat()
        guard stat(path, &st) == 0 else { throw LivePushError(.bgmOpenFailed, "\(path): no such file") }
        guard (st.st_mode & S_IFMT) != S_IFDIR else { throw LivePushError(.bgmOpenFailed, "\(path): is a directory") }
        guard access(path, R_OK) == 0 else { throw LivePushError(.bgmOpenFailed, "\(path): not readable") }
        return "file:" + path
    }

    private func open(_ url: String) throws(LivePushError) {
        guard let ctx = avformat_alloc_context() else { throw LivePushError(.outOfMemory, "avformat_alloc_context") }
        ctx.pointee.interrupt_callback = interrupt.callback
        // Only the source's own protocols, and no playlist that names other inputs (FFInputPolicy).
        var options = FFInputPolicy.options(protocols: isNetwork ? FFInputPolicy.webProtocols : FFInputPolicy.localFileProtocols)
        defer { av_dict_free(&options) }
        if isNetwork {
            av_dict_set(&options, "rw_timeout", String(timeout), 0)
            interrupt.arm(micros: timeout)
        }
        var opened: UnsafeMutablePointer<AVFormatContext>? = ctx
        var rc = avformat_open_input(&opened, url, nil, &options)  // frees ctx on failure
        guard rc >= 0, let opened else {
            interrupt.disarm()
            throw failure(rc, "cannot open")
        }
        context = opened
        opened.pointee.probesize = 1 << 20
        if isNetwork { interrupt.arm(micros: timeout) }
        rc = avformat_find_stream_info(opened, nil)
        interrupt.disarm()
        guard rc >= 0 else { throw failure(rc, "cannot read stream information") }
        let index = av_find_best_stream(opened, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        guard index >= 0, let stream = opened.pointee.streams[Int(index)] else {
            throw LivePushError(.bgmOpenFailed, "\(Redaction.redactURL(source)): no audio stream")
        }
        streamIndex = index
        do {
            decoder = try FFDecoder(parameters: stream.pointee.codecpar, timeBase: stream.pointee.time_base)
        } catch {
            throw LivePushError(.bgmOpenFailed, "\(Redaction.redactURL(source)): \(error.message)")
        }
        if opened.pointee.duration != FF.noPTS && opened.pointee.duration > 0 {
            duration = opened.pointee.duration
        } else if let us = FF.micros(stream.pointee.duration, stream.pointee.time_base), us > 0 {
            duration = us
        }
    }

    /// The error for a failed libavformat call: a timeout when the deadline fired (or the
    /// socket timed out), otherwise an open failure with FFmpeg's reason.
    private func failure(_ rc: Int32, _ what: String) -> LivePushError {
        let name = Redaction.redactURL(source)
        if isNetwork && (interrupt.didExpire || rc == livepush_averror(ETIMEDOUT)) {
            return LivePushError(.bgmDownloadTimeout, "\(name): no data for \(timeout / 1000) ms")
        }
        return LivePushError(.bgmOpenFailed, "\(name): \(what): \(FF.describe(rc))")
    }

    /// Decodes the next block of audio, converted to `format`, and hands its planes to
    /// `sink`. False at the end of the stream.
    func decodeNext(format: AudioFormat, _ sink: ([UnsafeBufferPointer<Float>]) -> Void) throws(LivePushError) -> Bool {
        guard let ctx = context else { return false }
        while true {
            if try decoder.receive() {
                try convert(decoder.frame, to: format, sink)
                return true
            }
            if draining {
                try convert(nil, to: format, sink)
                return false
            }
            if isNetwork { interrupt.arm(micros: timeout) }
            av_packet_unref(packet)
            let rc = av_read_frame(ctx, packet)
            interrupt.disarm()
            if rc >= 0 {
                if packet.pointee.stream_index == streamIndex { try decoder.send(packet) }
                continue
            }
            if interrupt.isCancelled { return false }
            if isNetwork && rc != FF.eof { throw failure(rc, "reading failed") }
            // End of the file (a damaged local file ends where it can no longer be read).
            draining = true
            try decoder.send(nil)
        }
    }

    /// Back to the start for another loop. False when the source cannot seek.
    func rewind() -> Bool {
        guard let ctx = context else { return false }
        if isNetwork { interrupt.arm(micros: timeout) }
        defer { interrupt.disarm() }
        let start = ctx.pointee.start_time != FF.noPTS ? ctx.pointee.start_time : 0
        var ok = avformat_seek_file(ctx, -1, Int64.min, start, start, 0) >= 0
        if !ok { ok = av_seek_frame(ctx, -1, start, AVSEEK_FLAG_BACKWARD) >= 0 }
        guard ok else { return false }
        decoder.flush()
        draining = false
        resampler?.reset()  // its delay line belongs to the previous pass
        return true
    }

    /// Resamples one decoded frame (nil: the resampler's delayed tail) into `format`.
    private func convert(_ frame: UnsafeMutablePointer<AVFrame>?, to format: AudioFormat,
                         _ sink: ([UnsafeBufferPointer<Float>]) -> Void) throws(LivePushError) {
        if resampler?.format != format { resampler = try FFResampler(format: format, failure: .bgmOpenFailed) }
        try resampler?.convert(frame) { planes, count throws(LivePushError) in
            sink((0..<format.channels).map { c in
                UnsafeBufferPointer(start: UnsafeRawPointer(planes[c]!).assumingMemoryBound(to: Float.self), count: Int(count))
            })
        }
    }
}
