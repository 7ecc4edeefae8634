import CFFmpeg

/// Passes H.264 through without re-encoding, converting to the output contract: AVCC with
/// 4-byte lengths and an AVCDecoderConfigurationRecord.
///
/// Handles AVCC input (MP4/MOV/MKV/FLV; any NAL length size) and Annex B input (MPEG-TS,
/// raw .h264), whose parameter sets come from Annex B extradata or, failing that, from the
/// first packet that carries them in-band.
final class VideoCopyProcessor: VideoPacketProcessor {
    let streamIndex: Int32
    let kind = MediaPacket.Kind.video
    private let stream: DemuxedStream
    /// Length-prefix size of AVCC input; nil for Annex B input.
    private var lengthSize: Int?
    private var record: [UInt8]?
    private var last: (dts: Int64, duration: Int64) = (0, 0)

    init(stream: DemuxedStream) {
        self.stream = stream
        streamIndex = stream.index
        let extradata = stream.extradata
        if let config = AVCCFormat.parseDecoderConfiguration(extradata) {
            lengthSize = config.lengthSize
            record = AVCCFormat.withFourByteLengths(extradata)
        } else if AnnexBConverter.startsWithStartCode(extradata) {
            record = AnnexBConverter.decoderConfigurationRecord(fromAnnexB: extradata)
        }
    }

    var isConfigured: Bool { record != nil }

    var trackInfo: VideoTrackInfo? {
        guard let record else { return nil }
        return VideoTrackInfo(
            width: stream.width, height: stream.height, frameRate: stream.frameRate,
            bitrate: stream.bitrate, decoderConfiguration: record)
    }

    func process(_ packet: UnsafeMutablePointer<AVPacket>, into out: inout [MediaPacket]) throws(LivePushError) {
        guard let (bytes, times, isKey) = FF.demuxedPacket(packet, stream.timeBase, last: &last) else { return }

        var data: [UInt8]
        var summary: AnnexBConverter.FrameSummary
        if let lengthSize, let s = AVCCFormat.summarize(bytes, lengthSize: lengthSize) {
            summary = s
            data = lengthSize == 4 ? Array(bytes) : AVCCFormat.toFourByteLengths(bytes, lengthSize: lengthSize)
        } else if AnnexBConverter.startsWithStartCode(bytes) {
            if record == nil { captureParameterSets(bytes, annexB: true) }
            (data, summary) = AnnexBConverter.avcc(fromAnnexB: bytes)
        } else if lengthSize == nil, let s = AVCCFormat.summarize(bytes, lengthSize: 4) {
            // Length-prefixed packets without an avcC (e.g. avc3 MP4: parameter sets in-band).
            if record == nil { captureParameterSets(bytes, annexB: false) }
            summary = s
            data = Array(bytes)
        } else {
            return  // neither form: not H.264 we can send; skip rather than poison the stream
        }
        guard !data.isEmpty, record != nil else { return }  // nothing decodable before SPS/PPS
        let importance: MediaPacket.Importance = isKey ? .key : (summary.isReference ? .reference : .disposable)
        out.append(MediaPacket(kind: .video, data: data, dts: times.dts, pts: times.pts,
                               duration: times.duration, importance: importance))
    }

    /// Builds the avcC from parameter sets carried in-band by a packet.
    private func captureParameterSets(_ bytes: UnsafeBufferPointer<UInt8>, annexB: Bool) {
        var sps: [[UInt8]] = [], pps: [[UInt8]] = []
        let collect = { (r: Range<Int>) in
            switch bytes[r.lowerBound] & 0x1F {
            case AnnexBConverter.NALType.sps: sps.append(Array(bytes[r]))
            case AnnexBConverter.NALType.pps: pps.append(Array(bytes[r]))
            default: break
            }
        }
        if annexB {
            AnnexBConverter.forEachNALUnit(in: bytes, collect)
        } else {
            AVCCFormat.forEachNALUnit(in: bytes, lengthSize: 4, collect)
        }
        record = AnnexBConverter.decoderConfigurationRecord(sps: sps, pps: pps)
    }

    func finish(into out: inout [MediaPacket]) throws(LivePushError) {}

    func reset() throws(LivePushError) { last = (0, 0) }
}
