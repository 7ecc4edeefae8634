import CFFmpeg

/// Small helpers around libav values (time bases, error codes) shared by the wrappers.
enum FF {
    static let noPTS: Int64 = livepush_av_nopts_value()
    static let eof: Int32 = livepush_averror_eof()
    static let eagain: Int32 = livepush_averror_eagain()
    static let invalidData: Int32 = livepush_averror_invaliddata()
    static let microsTimeBase = AVRational(num: 1, den: 1_000_000)

    /// libav logs to stderr by default (encoder statistics, warnings about odd files). The
    /// SDK reports problems through LivePushError instead, so only fatal messages remain.
    /// Evaluated once, on first use of the media layer.
    static let quietLogging: Void = av_log_set_level(AV_LOG_FATAL)

    /// `ts` in `timeBase` as microseconds, or nil for AV_NOPTS_VALUE.
    static func micros(_ ts: Int64, _ timeBase: AVRational) -> Int64? {
        guard ts != noPTS, timeBase.num > 0, timeBase.den > 0 else { return nil }
        return av_rescale_q(ts, timeBase, microsTimeBase)
    }

    static func double(_ r: AVRational) -> Double {
        guard r.num > 0, r.den > 0 else { return 0 }
        return Double(r.num) / Double(r.den)
    }

    /// FFmpeg's sentence for an AVERROR code, e.g. "Invalid data found when processing input".
    static func describe(_ code: Int32) -> String {
        var buf = [CChar](repeating: 0, count: 128)
        buf.withUnsafeMutableBufferPointer { livepush_av_strerror(code, $0.baseAddress, $0.count) }
        let bytes = buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self) + " (\(code))"
    }

    static func codecName(_ id: AVCodecID) -> String {
        guard let name = avcodec_get_name(id) else { return "codec \(id.rawValue)" }
        return String(cString: name)
    }

    /// Decode and presentation time of a demuxed packet in microseconds, filling in a missing
    /// one from the other and, when both are missing, continuing from `last`.
    static func packetTimes(
        _ pkt: UnsafeMutablePointer<AVPacket>, _ timeBase: AVRational, last: inout (dts: Int64, duration: Int64)
    ) -> (dts: Int64, pts: Int64, duration: Int64) {
        let duration = pkt.pointee.duration > 0 ? (micros(pkt.pointee.duration, timeBase) ?? 0) : 0
        let rawDts = micros(pkt.pointee.dts, timeBase)
        let rawPts = micros(pkt.pointee.pts, timeBase)
        let dts = rawDts ?? rawPts ?? (last.dts + last.duration)
        let pts = max(rawPts ?? dts, dts)
        last = (dts, duration)
        return (dts, pts, duration)
    }

    /// Loads a coded frame into `packet` for a decoder: its bytes, times (µs) and keyframe mark.
    static func load(_ media: MediaPacket, into packet: UnsafeMutablePointer<AVPacket>) throws(LivePushError) {
        av_packet_unref(packet)
        let rc = av_new_packet(packet, Int32(media.data.count))
        guard rc >= 0 else { throw LivePushError(.outOfMemory, "av_new_packet: \(describe(rc))") }
        media.data.withUnsafeBufferPointer { bytes in
            if let base = bytes.baseAddress { packet.pointee.data.update(from: base, count: bytes.count) }
        }
        packet.pointee.pts = media.pts
        packet.pointee.dts = media.dts
        packet.pointee.duration = media.duration
        if media.kind == .video && media.isKeyframe { packet.pointee.flags |= livepush_av_pkt_flag_key() }
    }

    /// A demuxed packet as the copy processors read it: its bytes (nil when empty), its times in
    /// microseconds (``packetTimes(_:_:last:)``) and whether it is a keyframe.
    static func demuxedPacket(
        _ packet: UnsafeMutablePointer<AVPacket>, _ timeBase: AVRational, last: inout (dts: Int64, duration: Int64)
    ) -> (bytes: UnsafeBufferPointer<UInt8>, times: (dts: Int64, pts: Int64, duration: Int64), isKey: Bool)? {
        guard let base = packet.pointee.data, packet.pointee.size > 0 else { return nil }
        return (UnsafeBufferPointer(start: base, count: Int(packet.pointee.size)), packetTimes(packet, timeBase, last: &last),
                packet.pointee.flags & livepush_av_pkt_flag_key() != 0)
    }

    // AVFrame's `data` and `linesize` are C arrays (tuples in Swift); libswscale wants
    // pointers to their first elements.
    static func planes(_ frame: UnsafePointer<AVFrame>) -> UnsafePointer<UnsafePointer<UInt8>?> {
        UnsafeRawPointer(frame).advanced(by: MemoryLayout<AVFrame>.offset(of: \AVFrame.data)!)
            .assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
    }

    static func mutablePlanes(_ frame: UnsafeMutablePointer<AVFrame>) -> UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?> {
        UnsafeMutableRawPointer(frame).advanced(by: MemoryLayout<AVFrame>.offset(of: \AVFrame.data)!)
            .assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self)
    }

    static func strides(_ frame: UnsafePointer<AVFrame>) -> UnsafePointer<Int32> {
        UnsafeRawPointer(frame).advanced(by: MemoryLayout<AVFrame>.offset(of: \AVFrame.linesize)!)
            .assumingMemoryBound(to: Int32.self)
    }
}
