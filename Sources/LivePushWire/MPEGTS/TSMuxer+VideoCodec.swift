extension TSMuxer {
    /// The video codecs the muxer carries, each with its PMT stream_type.
    public enum VideoCodec: Sendable, Equatable {
        case h264
        case hevc

        var streamType: TSStreamType { self == .h264 ? .h264 : .hevc }
    }
}
