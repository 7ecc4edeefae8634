import CFFmpeg

/// Turns the demuxed packets of one stream into pushable ``MediaPacket``s, either by copying
/// (with format conversion) or by transcoding. Produced timestamps are microseconds on the
/// file's own timeline; ``FileMediaSource`` normalizes them.
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
    /// Appends one frame of the pause image lasting `duration` µs; false when the processor
    /// cannot (stream copy, no image).
    func appendStill(duration: Int64, into out: inout [MediaPacket]) throws(LivePushError) -> Bool
}

extension VideoPacketProcessor {
    func appendStill(duration: Int64, into out: inout [MediaPacket]) throws(LivePushError) -> Bool { false }
}

protocol AudioPacketProcessor: PacketProcessor {
    var trackInfo: AudioTrackInfo? { get }
    /// Appends `duration` µs of silence after what was encoded so far (under a pause image);
    /// false when the processor cannot (stream copy).
    func appendSilence(duration: Int64, into out: inout [MediaPacket]) throws(LivePushError) -> Bool
}

extension AudioPacketProcessor {
    func appendSilence(duration: Int64, into out: inout [MediaPacket]) throws(LivePushError) -> Bool { false }
}
