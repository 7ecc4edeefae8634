import CFFmpeg

/// Passes AAC through without re-encoding, as raw frames plus an AudioSpecificConfig.
///
/// ADTS input (MPEG-TS, .aac) is detected on the first packet: the 7/9-byte headers are cut
/// off (several ADTS frames in one packet become several packets) and the ASC is built from
/// the header with ``ADTSHeader``.
final class AudioCopyProcessor: AudioPacketProcessor {
    let streamIndex: Int32
    let kind = MediaPacket.Kind.audio
    private let stream: DemuxedStream
    private var asc: [UInt8]?
    private var sampleRate: Int
    private var channels: Int
    /// Nil until the first packet says whether the stream is ADTS.
    private var isADTS: Bool?
    private var last: (dts: Int64, duration: Int64) = (0, 0)

    init(stream: DemuxedStream) {
        self.stream = stream
        streamIndex = stream.index
        asc = stream.extradata.isEmpty ? nil : stream.extradata
        sampleRate = stream.sampleRate
        channels = stream.channels
    }

    var isConfigured: Bool { asc != nil }

    var trackInfo: AudioTrackInfo? {
        guard let asc else { return nil }
        return AudioTrackInfo(sampleRate: sampleRate, channels: channels, bitrate: stream.bitrate, audioSpecificConfig: asc)
    }

    func process(_ packet: UnsafeMutablePointer<AVPacket>, into out: inout [MediaPacket]) throws(LivePushError) {
        let pkt = packet.pointee
        guard let base = pkt.data, pkt.size > 0 else { return }
        let bytes = UnsafeBufferPointer(start: base, count: Int(pkt.size))
        let times = FF.packetTimes(packet, stream.timeBase, last: &last)
        if isADTS == nil { isADTS = ADTSHeader(bytes) != nil }
        guard isADTS == true else {
            guard asc != nil else { return }
            out.append(MediaPacket(kind: .audio, data: Array(bytes), dts: times.dts, pts: times.pts,
                                   duration: times.duration, importance: .key))
            return
        }
        var offset = 0
        var frameIndex: Int64 = 0
        while offset < bytes.count {
            let rest = UnsafeBufferPointer(rebasing: bytes[offset...])
            guard let header = ADTSHeader(rest), header.frameLength <= rest.count else { break }
            if asc == nil {
                asc = header.audioSpecificConfig
                if sampleRate <= 0 { sampleRate = header.sampleRate }
                if channels <= 0 { channels = header.channelConfiguration }
            }
            let payload = rest[header.headerLength..<header.frameLength]
            let rate = Int64(sampleRate > 0 ? sampleRate : header.sampleRate)
            let frameDuration = 1024 * 1_000_000 * Int64(header.rawDataBlocks) / rate
            let shift = frameIndex * frameDuration
            if !payload.isEmpty {
                out.append(MediaPacket(kind: .audio, data: Array(payload), dts: times.dts + shift, pts: times.pts + shift,
                                       duration: frameDuration, importance: .key))
            }
            frameIndex += 1
            offset += header.frameLength
        }
    }

    func finish(into out: inout [MediaPacket]) throws(LivePushError) {}

    func reset() throws(LivePushError) { last = (0, 0) }
}
