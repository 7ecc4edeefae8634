import Synchronization

/// A live input with failover: a network feed (`rtmp://`, `srt://`, `http(s)://`, `udp://`,
/// `rtp://`) as the primary, and a backup file or the slate standing in when it is lost.
///
/// The output is one continuous stream of pictures at one format (the feed's, probed at the
/// start, else the backup's), encoded once after the clock: each frame slot of the output's own timeline shows the primary's next
/// picture, a fill while it is late, or the backup or slate once it is lost
/// (``FailoverStateMachine``). So a feed that dies and comes back as a new publish, with new
/// timestamps, never shows them in the output: there are no gaps and no jumps.
///
/// Slots fall due in real time from the first one taken, and each waits for its due time: the
/// pace is the feed's arrival, in `--fast` mode as well (a live feed cannot be read faster
/// than it comes). Runs on a producer thread of its own (``readsWithoutWaiting`` is false).
///
/// The slots and the encode are the producer's (``FailoverSlots``, in a `Mutex` only the
/// producer takes); what other threads call (``stats``, ``played``, ``interrupt()``) reads the
/// feed and ``LiveInputProgress``, so it never waits for a slot.
final class FailoverInput: MediaInput, Sendable {
    let info: StreamInfo
    private let feed: LiveFeed
    private let progress: LiveInputProgress
    private let slots: Mutex<FailoverSlots>

    /// Probes the feed (for at most the input timeout) for its format, and starts reading it.
    /// `duration`: the input ends after this much output (a live playout entry); nil: when stopped.
    /// `requiresFeed`: a feed that does not answer the probe fails the init instead of starting
    /// on the backup or slate.
    /// An `http(s)://…m3u8` URL is an HLS input (``HLSFeedSource``): `tls` checks its origin,
    /// `hlsTags` are the cue tags it reads.
    init(url: String, options: LiveInputOptions, media: MediaSourceOptions,
         duration: Duration? = nil, requiresFeed: Bool = false, clock: any MonotonicClock = SystemMonotonicClock(),
         tls: TLSOptions = TLSOptions(), hlsTags: Set<HLSTagFamily> = Set(HLSTagFamily.allCases),
         report: @escaping @Sendable (InputEvent) -> Void) throws(LivePushError) {
        let name = FFDemuxer.redacted(url)
        let interrupt = IOInterrupt()
        let hls: HLSFeedSource?
        if HLSFeedSource.handles(url, followsReferences: options.followsReferences) {
            hls = try HLSFeedSource(url: url, options: options, tls: tls, tags: hlsTags, clock: clock)
        } else {
            hls = nil
        }
        var probed: FFDemuxer?
        do {
            if let hls {
                probed = try hls.openDemuxer()
            } else {
                probed = try FFDemuxer(url: url, timeout: options.timeout, interrupt: interrupt,
                                       followsReferences: options.followsReferences)
            }
        } catch {
            if requiresFeed { throw error }
            report(.primaryRetry(error, retryIn: .zero))
        }
        // The backup's format stands in for a feed that did not answer; a backup that cannot
        // be opened fails the init just below (BackupFile), with its own error.
        let backupDemuxer = probed == nil ? options.backup.flatMap { try? FFDemuxer(path: $0) } : nil
        let format = Self.format(of: probed ?? backupDemuxer, media: media)
        let frames = try RawFrameQueue(video: .init(width: format.size.width, height: format.size.height, frameRate: format.frameRate),
                                       audio: .init(sampleRate: format.audio.sampleRate, channels: format.audio.channels),
                                       options: media)
        info = frames.info
        let backup = try options.backup.map { path throws(LivePushError) in try BackupFile(path: path, size: format.size, audio: format.audio) }
        let black = try VideoFrame(width: format.size.width, height: format.size.height)
        let slate = try options.slateImage.map { path throws(LivePushError) in
            try ImageLoader.loadFrame(path: path, width: format.size.width, height: format.size.height)
        } ?? black
        let feedAnswered = probed != nil
        let feed = LiveFeed(url: url, name: name, opened: probed.map { ($0, interrupt) }, size: format.size,
                            frameRate: format.frameRate, audio: format.audio, options: options, clock: clock, hls: hls, report: report)
        let progress = LiveInputProgress(clock: clock)
        self.feed = feed
        self.progress = progress
        readsCues = hls != nil
        slots = Mutex(FailoverSlots(frames: frames, feed: feed, backup: backup, progress: progress,
                                    options: options, report: report, frameDuration: MediaTime(seconds: 1 / format.frameRate).microseconds,
                                    black: black, slate: slate, end: duration.map { $0.nanoseconds / 1000 },
                                    feedAnswered: feedAnswered))
        feed.start()
    }

    deinit { feed.stop() }

    /// The feed's format (else the backup's, else 1280x720 at 25 fps, 44.1 kHz stereo), as the
    /// options override it.
    private static func format(of demuxer: FFDemuxer?, media: MediaSourceOptions) -> (size: VideoSize, frameRate: Double, audio: AudioFormat) {
        let video = demuxer?.streams.first { $0.mediaType == .video && !$0.isAttachedPicture }
        let audio = demuxer?.streams.first { $0.mediaType == .audio }
        let probed = video.flatMap { $0.width > 0 && $0.height > 0 ? VideoSize(width: $0.width & ~1, height: $0.height & ~1) : nil }
        let size = media.outputSize ?? probed ?? VideoSize(width: 1280, height: 720)
        let rate = media.frameRate ?? video.map(\.frameRate).flatMap { (1...120).contains($0) ? $0 : nil } ?? 25
        let sampleRate = media.audioSampleRate ?? audio.map(\.sampleRate).flatMap { $0 > 0 ? $0 : nil } ?? 44_100
        return (size, rate, AudioFormat(sampleRate: sampleRate, channels: min(2, max(1, audio?.channels ?? 2))))
    }

    var readsWithoutWaiting: Bool { false }

    /// Whether its primary is an HLS input, whose tags make cues (a push gives it its breaks).
    let readsCues: Bool

    /// The output's time starts at 0 with its first slot.
    var start: MediaStart? { MediaStart(presentation: 0, decode: 0) }

    /// What the input did: ``PushStats/input``.
    var stats: LiveInputStats {
        var stats = progress.figures.withLock { $0 }
        stats.droppedFrames = feed.droppedFrames
        stats.connections = feed.connections
        return stats
    }

    /// Seconds of output made so far.
    var played: Double { MediaTime.microseconds(progress.sent).seconds }

    func interrupt() {
        progress.stop()
        feed.stop()
    }

    func nextPacket() throws(LivePushError) -> MediaPacket? {
        try slots.withLock { slots throws(LivePushError) in try slots.nextPacket() }
    }

    func rewind() throws(LivePushError) {
        throw LivePushError(.invalidState, "a live input is not rewound")
    }

    func suspend() throws(LivePushError) -> [MediaPacket] {
        slots.withLock { $0.suspend() }
        return []
    }

    func requestKeyframe(atOrAfter time: Int64) {
        slots.withLock { $0.requestKeyframe(atOrAfter: time) }
    }
}
