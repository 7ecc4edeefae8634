/// The push's one clock: the only place where input time becomes output time, and output
/// time becomes wall-clock time.
///
/// Output time is a single timeline in microseconds that starts at 0 and only moves forward.
/// Inputs keep their own timestamps (a file's, an app's, a generator's); the clock lays them
/// end to end:
/// - Every input, and every new pass over the same input (a loop), is a **segment**. The
///   segment's start (``MediaStart``: its earliest presentation time, from the input, else its
///   first packet's) lands where everything sent so far ends (the latest `pts + duration` over
///   both tracks). Both tracks of the segment move by the same amount, so audio and video stay
///   aligned across the switch, with no gap; an input whose timestamps start late (a file cut
///   from a stream) starts at once. The very first segment starts its earliest *decode* time
///   at 0 instead, so no timestamp is negative (B-frame streams decode before they present).
/// - Per track, decode timestamps never go backwards (FLV and every RTMP server require it);
///   presentation is never before decode.
/// - In real time, output time is released against the wall clock from the first packet on;
///   a pause without media stops that clock and `resume` restarts it where it stopped.
///
/// Pause with an image, a loop, playout and blackout are all switches: `beginSegment()`.
struct OutputClock: Sendable {
    private var offset: Int64 = 0
    /// Set by `beginSegment`; the next packet applies it.
    private var pendingSegment: MediaStart?? = .some(nil)
    private var stampedAny = false
    /// The current segment's presentation start, input time.
    private var segmentStart = Int64.min
    /// Where each track's stamped media ends (presentation), output time.
    private(set) var videoEnd = Int64.min
    private(set) var audioEnd = Int64.min
    /// Where everything stamped so far ends: the next segment starts here. Raw sound that runs
    /// past the pictures by part of its last block does not push the next segment later: an
    /// input decodes whole blocks (1024 samples of AAC, 1152 of MP3), so its sound always ends
    /// a little past its last picture at a switch, and the next input would start after a
    /// hole in the pictures of up to a block. The next segment starts where the pictures end
    /// instead, and the sound encode after the clock cuts the overlap (``SoundPlacement``), as
    /// an encoder before the clock dropped the samples it still held. Copied sound cannot be
    /// cut: the next segment starts after it.
    var end: Int64 { max(0, videoEnd, videoEnd == .min ? audioEnd : audioEnd - rawSoundTail) }
    /// The duration of the last sound stamped, when it was raw (else 0): what may overhang.
    private var rawSoundTail: Int64 = 0
    private var lastVideoDTS = Int64.min
    private var lastAudioDTS = Int64.min
    private let fallbackVideoDuration: Int64
    private let fallbackAudioDuration: Int64
    /// Wall-clock µs (monotonic) at which output time 0 is due; nil until the first packet.
    private var wallOrigin: Int64?
    private var pausedAt: Int64?

    init(info: StreamInfo) {
        let fps = info.video?.frameRate ?? 0
        fallbackVideoDuration = fps > 0 ? Int64(1_000_000 / fps) : 40_000
        let rate = info.audio?.sampleRate ?? 0
        fallbackAudioDuration = rate > 0 ? MediaTime(samples: 1024, rate: rate).microseconds : 23_220
    }

    // MARK: Input time → output time

    /// The next packet starts a new segment (another input, or the same one again), which
    /// continues where the output ends. `start` is the input's own start, when it knows it;
    /// otherwise the next packet's timestamps are taken.
    mutating func beginSegment(start: MediaStart? = nil) {
        pendingSegment = .some(start)
    }

    /// Whether the packet belongs on the output: audio that lies (mostly) before its segment's
    /// start is not sent. That is an encoder's priming frame, or sound from before a clip's
    /// `in` point: it would overlap what the previous segment sent, and a decoder that plays
    /// frames back to back would put every later sample late by its length.
    mutating func admits(_ packet: MediaPacket) -> Bool {
        beginPendingSegment(with: packet)
        return packet.kind == .video || packet.pts + packet.duration / 2 > segmentStart
    }

    /// The packet on output time.
    mutating func stamp(_ packet: MediaPacket) -> MediaPacket {
        beginPendingSegment(with: packet)
        stampedAny = true
        var out = packet
        out.dts += offset
        out.pts += offset
        let last = packet.kind == .video ? lastVideoDTS : lastAudioDTS
        out.dts = max(out.dts, last)
        out.pts = max(out.pts, out.dts)
        if packet.kind == .video { lastVideoDTS = out.dts } else { lastAudioDTS = out.dts }
        let duration = packet.duration > 0 ? packet.duration
            : (packet.kind == .video ? fallbackVideoDuration : fallbackAudioDuration)
        if packet.kind == .video {
            videoEnd = max(videoEnd, out.pts + duration)
        } else {
            audioEnd = max(audioEnd, out.pts + duration)
            rawSoundTail = packet.isRawSound ? duration : 0
        }
        return out
    }

    /// The output presentation time `packet` would get in the current segment (nil when a new
    /// segment is pending: its first packet fixes the mapping).
    func presentationTime(of packet: MediaPacket) -> Int64? {
        if case .some = pendingSegment { return nil }
        return packet.pts + offset
    }

    /// How the current segment maps input time (nil when a new segment is pending).
    var inputMapping: InputTimeMapping? {
        if case .some = pendingSegment { return nil }
        return InputTimeMapping(shift: offset)
    }

    /// What puts `packet`'s input time on the output: the current segment's mapping, or, while a
    /// new segment is pending, the one that would place the packet where the output ends.
    func mapping(placing packet: MediaPacket) -> InputTimeMapping {
        inputMapping ?? InputTimeMapping(placing: packet.pts, at: end)
    }

    /// The first packet after `beginSegment` fixes the segment's mapping.
    private mutating func beginPendingSegment(with packet: MediaPacket) {
        guard case .some(let announced) = pendingSegment else { return }
        pendingSegment = .none
        let start = announced ?? MediaStart(presentation: packet.pts, decode: packet.dts)
        segmentStart = start.presentation
        offset = stampedAny ? end - start.presentation : -min(start.decode, start.presentation)
    }

    // MARK: Output time → wall clock (real time)

    /// The monotonic wall-clock time at which output time `time` is due. The first call
    /// anchors the clock: that packet is due now.
    mutating func due(_ time: MediaTime, now: MediaTime) -> MediaTime {
        let origin = wallOrigin ?? (now.microseconds - time.microseconds)
        wallOrigin = origin
        return .microseconds(origin + time.microseconds)
    }

    /// Whether ``due(_:now:)`` has tied output time to the wall clock yet.
    var isAnchored: Bool { wallOrigin != nil }

    /// Nothing is sent from `now` until `resume(now:)`: the wall clock stops for the output.
    mutating func pause(now: MediaTime) {
        if pausedAt == nil { pausedAt = now.microseconds }
    }

    mutating func resume(now: MediaTime) {
        guard let since = pausedAt else { return }
        pausedAt = nil
        wallOrigin = wallOrigin.map { $0 + (now.microseconds - since) }
    }

    var isPaused: Bool { pausedAt != nil }

    /// The output time at which the wall-clock time `wall` (µs since 1970) falls, given the
    /// wall clock and the monotonic clock read together at the push's start. In real time that
    /// is where the clock releases the output at that instant: a pause before it moves it
    /// earlier by the pause's length. In `--fast` mode, or before the first packet, output
    /// time 0 stands for the reading's instant.
    func outputTime(ofWallTime wall: Int64, reading: WallClockReading) -> Int64 {
        let monotonic = reading.monotonic.microseconds + (wall - reading.wall)
        return monotonic - (wallOrigin ?? reading.monotonic.microseconds)
    }

    // MARK: One connection's continuation

    /// After a reconnect in `--fast` mode an output sends again what may not have reached the
    /// server, from a keyframe at output time `first`. On the new connection it must follow the
    /// last timestamp sent by one frame (`step`): the amount to add to what is sent again.
    static func resendOffset(lastSent: Int64, step: Int64, first: Int64) -> Int64 {
        lastSent + step - first
    }
}

/// Where an input's media starts on its own timeline, microseconds: the earliest presentation
/// and decode timestamps over its tracks.
public struct MediaStart: Sendable, Equatable {
    /// The earliest presentation timestamp, microseconds.
    public var presentation: Int64
    /// The earliest decode timestamp, microseconds.
    public var decode: Int64

    /// Creates a start from its two timestamps.
    public init(presentation: Int64, decode: Int64) {
        self.presentation = presentation
        self.decode = decode
    }
}
