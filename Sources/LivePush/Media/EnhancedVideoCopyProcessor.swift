import CFFmpeg

/// Passes HEVC, AV1 or VP9 through without re-encoding, for Enhanced RTMP (and SRT): the
/// samples as an MP4 or Matroska file holds them (HEVC as length-prefixed NAL units, made
/// 4-byte here; AV1 as OBUs; VP9 as frames) with the container's configuration record
/// (hvcC, av1C, vpcC). Annex B sources (HEVC in MPEG-TS) are not copied: they are re-encoded.
final class EnhancedVideoCopyProcessor: VideoPacketProcessor {
    let streamIndex: Int32
    let kind = MediaPacket.Kind.video
    let codec: VideoCodec
    private let stream: DemuxedStream
    private let record: [UInt8]
    /// HEVC's NAL length size in the source (hvcC's lengthSizeMinusOne + 1).
    private let lengthSize: Int
    private var last: (dts: Int64, duration: Int64) = (0, 0)

    /// nil when the stream is not one this can copy (another codec, or no configuration record).
    init?(stream: DemuxedStream) {
        switch stream.codecID {
        case AV_CODEC_ID_HEVC:
            // An hvcC starts with configurationVersion 1 and is at least 23 bytes; Annex B does not.
            guard stream.extradata.count >= 23, stream.extradata[0] == 1 else { return nil }
            codec = .hevc
            lengthSize = Int(stream.extradata[21] & 0x03) + 1
            var hvcC = stream.extradata
            hvcC[21] |= 0x03  // what is sent has 4-byte lengths
            record = hvcC
        case AV_CODEC_ID_AV1:
            guard stream.extradata.count >= 4, stream.extradata[0] == 0x81 else { return nil }
            codec = .av1
            lengthSize = 0
            record = stream.extradata
        case AV_CODEC_ID_VP9:
            codec = .vp9
            lengthSize = 0
            record = stream.extradata.first == 1 ? stream.extradata : Self.vpcC(for: stream)
        default:
            return nil
        }
        self.stream = stream
        streamIndex = stream.index
    }

    var isConfigured: Bool { true }

    var trackInfo: VideoTrackInfo? {
        VideoTrackInfo(codec: codec, width: stream.width, height: stream.height, frameRate: stream.frameRate,
                       bitrate: stream.bitrate, decoderConfiguration: record)
    }

    func process(_ packet: UnsafeMutablePointer<AVPacket>, into out: inout [MediaPacket]) throws(LivePushError) {
        guard let (bytes, times, isKey) = FF.demuxedPacket(packet, stream.timeBase, last: &last) else { return }
        let data = codec == .hevc && lengthSize != 4 ? AVCCFormat.toFourByteLengths(bytes, lengthSize: lengthSize) : Array(bytes)
        // Without parsing each codec's slices, every non-key frame counts as a reference: the
        // send queue then drops whole GOPs rather than single frames.
        out.append(MediaPacket(kind: .video, data: data, dts: times.dts, pts: times.pts, duration: times.duration,
                               importance: isKey ? .key : .reference))
    }

    func finish(into out: inout [MediaPacket]) throws(LivePushError) {}

    func reset() throws(LivePushError) { last = (0, 0) }

    /// A VP9 CodecConfigurationRecord ("vpcC", version 1) for a source whose container gave
    /// none: profile 0, level 3.1, 8 bits, 4:2:0, BT.709, the common case.
    private static func vpcC(for stream: DemuxedStream) -> [UInt8] {
        [1, 0, 0, 0, 0, 31, 0x82, 1, 1, 1, 0, 0]
    }
}
