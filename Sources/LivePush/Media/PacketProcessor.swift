import CFFmpeg

/// Turns the demuxed packets of one stream into pushable ``MediaPacket``s, either by copying
/// (with format conversion) or by transcoding. Produced timestamps are microseconds on the
/// file's own timeline; ``FileInput`` normalizes them.
protocol PacketProcessor: AnyObject {
    var streamIndex: Int32 { get }
    var kind: MediaPacket.Kind { get }
    /// Whether the track's codec configuration is known (e.g. SPS/PPS seen, ASC known).
    var isConfigured: Bool { get }
    /// Consumes one demuxed packet, appending what it produces.
    func process(_ packet: UnsafeMutablePointer<AVPacket>, into out: inout [MediaPacket]) throws(LivePushError)
    /// End of the media: appends whatever is still buffered (encoder delay, FIFO tail).
    func finish(into out: inout [MediaPacket]) throws(LivePushError)
    /// The demuxer went back to the start: drop buffered state.
    func reset() throws(LivePushError)
}

protocol VideoPacketProcessor: PacketProcessor {
    /// The track as it will be sent; nil until configured.
    var trackInfo: VideoTrackInfo? { get }
    /// Another input goes on air: appends what it still holds; the next picture produced is
    /// a keyframe (stream copy cannot; the push skips to its next keyframe instead).
    func suspend(into out: inout [MediaPacket]) throws(LivePushError)
    /// The encoder's bitrate from the next frame (bit/s); stream copy and decoding ignore it
    /// (the push's encode after the clock takes it).
    func setBitrate(_ bitsPerSecond: Int)
    /// The first frame encoded at or after `time` (µs) is a keyframe; stream copy ignores it.
    func requestKeyframe(atOrAfter time: Int64)
}

extension VideoPacketProcessor {
    func suspend(into out: inout [MediaPacket]) throws(LivePushError) {}
    func setBitrate(_ bitsPerSecond: Int) {}
    func requestKeyframe(atOrAfter time: Int64) {}
}

protocol AudioPacketProcessor: PacketProcessor {
    var trackInfo: AudioTrackInfo? { get }
}
