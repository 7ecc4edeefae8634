import CFFmpeg

/// What the container says about one stream, copied out of AVStream/AVCodecParameters so
/// the rest of the layer can decide without touching C pointers.
struct DemuxedStream {
    enum MediaType { case video, audio, other }

    var index: Int32
    var mediaType: MediaType
    var codecID: AVCodecID
    var timeBase: AVRational
    var extradata: [UInt8]
    var width: Int
    var height: Int
    /// avg_frame_rate, else r_frame_rate; 0 when unknown.
    var frameRate: Double
    var frameRateRational: AVRational
    var bitrate: Int
    var sampleRate: Int
    var channels: Int
    var isAttachedPicture: Bool

    var codecName: String { FF.codecName(codecID) }
    var isH264: Bool { codecID == AV_CODEC_ID_H264 }
    var isAAC: Bool { codecID == AV_CODEC_ID_AAC }
    /// An MPEG-TS SCTE-35 cue stream: one splice_info_section per packet.
    var isSCTE35: Bool { codecID == AV_CODEC_ID_SCTE_35 }

    init(_ stream: UnsafeMutablePointer<AVStream>) {
        let st = stream.pointee
        let par = st.codecpar.pointee
        index = st.index
        switch par.codec_type {
        case AVMEDIA_TYPE_VIDEO: mediaType = .video
        case AVMEDIA_TYPE_AUDIO: mediaType = .audio
        default: mediaType = .other
        }
        codecID = par.codec_id
        timeBase = st.time_base
        if let data = par.extradata, par.extradata_size > 0 {
            extradata = Array(UnsafeBufferPointer(start: data, count: Int(par.extradata_size)))
        } else {
            extradata = []
        }
        width = Int(par.width)
        height = Int(par.height)
        let rate = (st.avg_frame_rate.num > 0 && st.avg_frame_rate.den > 0) ? st.avg_frame_rate : st.r_frame_rate
        frameRateRational = rate
        frameRate = FF.double(rate)
        bitrate = Int(max(0, par.bit_rate))
        sampleRate = Int(par.sample_rate)
        channels = Int(par.ch_layout.nb_channels)
        isAttachedPicture = st.disposition & livepush_av_disposition_attached_pic() != 0
    }

    /// Whether the container gave everything needed without probing packets.
    var hasEssentialParameters: Bool {
        switch mediaType {
        case .video:
            guard codecID != AV_CODEC_ID_NONE, width > 0, height > 0 else { return false }
            return !isH264 || !extradata.isEmpty
        case .audio:
            guard codecID != AV_CODEC_ID_NONE, sampleRate > 0, channels > 0 else { return false }
            return !isAAC || !extradata.isEmpty
        case .other:
            return true
        }
    }
}
