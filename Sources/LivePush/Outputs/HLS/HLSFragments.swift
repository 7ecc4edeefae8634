/// An HLS output's CMAF side (`hls_segment_type=fmp4`): the codec configuration its segments
/// have, the muxer for it, and the init segment each muxer begins with (`<stem>_init.mp4`, then
/// `<stem>_init1.mp4`, … after each change), stored once, before the first segment that needs
/// it.
///
/// A fragmented MP4's configuration is in its init segment, not in the stream: a sequence
/// header with new bytes (an input switch to another configuration) needs a new muxer, so the
/// segment in progress ends before the next frame, and the next one starts after
/// `#EXT-X-DISCONTINUITY` with its own `#EXT-X-MAP` (``HLSStream`` asks ``changed``). The muxer
/// is made at the first frame, not before: a push that encodes learns its configuration from
/// the encoder's sequence header.
struct HLSFragments: Sendable {
    /// The segments' names start with this (`index`).
    let stem: String
    /// The configuration the next frames have.
    private(set) var info: StreamInfo
    private var muxer: HLSFragmentMuxer?
    /// Init segments made so far (the current one's number is this minus one).
    private var made = 0
    /// The current muxer's init segment, until it is handed to the store.
    private var unstoredInit: [UInt8]?
    /// A new configuration came while a muxer was open: the open segment must end before the
    /// next frame, which starts a discontinuity.
    private(set) var changed = false
    /// One picture's or one sound frame's length, µs: a frame whose duration is unknown is
    /// given this (the muxer closes a fragment's last sample with it).
    let videoFrame: Int64
    let audioFrame: Int64

    init(stem: String, info: StreamInfo, videoFrame: Int64) {
        self.stem = stem
        self.info = info
        self.videoFrame = videoFrame
        audioFrame = Int64(1024 * 1_000_000 / max(8000, info.audio?.sampleRate ?? 48_000))
    }

    /// The init segment of the current muxer, as the playlist names it (`index_init.mp4`).
    var mapName: String { Self.mapName(stem: stem, number: max(0, made - 1)) }

    static func mapName(stem: String, number: Int) -> String {
        number == 0 ? "\(stem)_init.mp4" : "\(stem)_init\(number).mp4"
    }

    /// A sequence header: its configuration is the next frames'. One that says what the open
    /// muxer already has changes nothing.
    mutating func adopt(sequenceHeader packet: MediaPacket) {
        var next = info
        next.adopt(sequenceHeader: packet)
        guard next != info else { return }
        info = next
        if muxer != nil { changed = true }
    }

    /// The open segment ended: the next frame opens a muxer with the new configuration.
    mutating func startDiscontinuity() {
        muxer = nil
        changed = false
    }

    /// Adds a coded frame (a sequence header, cue or data message is none).
    mutating func write(_ packet: MediaPacket) throws(LivePushError) {
        guard packet.kind == .video || packet.kind == .audio, !packet.isSequenceHeader, !packet.data.isEmpty else { return }
        let muxer = try current()
        var frame = packet
        if frame.duration <= 0 { frame.duration = frame.kind == .video ? videoFrame : audioFrame }
        try muxer.write(frame)
    }

    /// The open segment's fragment, ended, and the init segment to store before it when it is
    /// the first of its muxer.
    mutating func cut() throws(LivePushError) -> (initSegment: [UInt8]?, fragment: [UInt8]) {
        guard let muxer else { return (nil, []) }
        let fragment = try muxer.cut()
        defer { unstoredInit = nil }
        return (unstoredInit, fragment)
    }

    private mutating func current() throws(LivePushError) -> HLSFragmentMuxer {
        if let muxer { return muxer }
        let made = try HLSFragmentMuxer(stream: info)
        muxer = made
        unstoredInit = made.initSegment
        self.made += 1
        return made
    }
}
