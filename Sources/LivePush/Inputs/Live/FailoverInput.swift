import Synchronization

/// A live input with failover: a network feed (`rtmp://`, `srt://`, `http(s)://`, `udp://`,
/// `rtp://`) as the primary, and a backup file or the slate standing in when it is lost.
///
/// The output is one continuous encode at one format (the feed's, probed at the start, else
/// the backup's): each frame slot of the output's own timeline shows the primary's next
/// picture, a fill while it is late, or the backup or slate once it is lost
/// (``FailoverStateMachine``). So a feed that dies and comes back as a new publish, with new
/// timestamps, never shows them in the output: there are no gaps and no jumps.
///
/// Slots fall due in real time from the first one taken, and each waits for its due time: the
/// pace is the feed's arrival, in `--fast` mode as well (a live feed cannot be read faster
/// than it comes). Runs on a producer thread of its own (``readsWithoutWaiting`` is false).
final class FailoverInput: MediaInput, @unchecked Sendable {
    let info: StreamInfo
    private let encoder: RawFrameEncoder
    /// The push's raw-frame stages: the detector and the filters see every picture sent.
    private let stages: FrameStages
    private let feed: LiveFeed
    private let backup: BackupFile?
    private let options: LiveInputOptions
    private let report: @Sendable (InputEvent) -> Void
    private let frameDuration: Int64
    private let samplesPerFrame = 1024
    private let black: VideoFrame
    private let slate: VideoFrame
    private var machine: FailoverStateMachine
    private var lastPicture: VideoFrame?
    /// Where the feed's own timeline stands against the output's: the last feed picture shown
    /// (its output time, its source time). The feed's sound is taken by it.
    private var primaryClock: (output: Int64, source: Int64)?
    /// Whether the last video slot was filled (its sound is silence too).
    private var filling = false
    private var nextVideo: Int64 = 0
    private var nextAudioSample: Int64 = 0
    /// Monotonic µs of the output's time 0, set by the first slot.
    private var anchor: Int64?
    private let waiter = ConditionLock()
    private var stopped = false
    private let figures = Mutex(LiveInputStats())
    /// Output time (µs) at which the input ends, if it does.
    private let end: Int64?
    /// Output time sent so far (µs), read from other threads.
    private let position = Mutex<Int64>(0)
    /// Whether the feed answered when the input opened: the output then starts with its first picture.
    private let feedAnswered: Bool

    /// Probes the feed (for at most the input timeout) for its format, and starts reading it.
    /// `duration`: the input ends after this much output (a live playout entry); nil: when stopped.
    /// `requiresFeed`: a feed that does not answer the probe fails the init instead of starting
    /// on the backup or slate.
    init(url: String, options: LiveInputOptions, media: MediaSourceOptions, stages: FrameStages,
         duration: Duration? = nil, requiresFeed: Bool = false,
         report: @escaping @Sendable (InputEvent) -> Void) throws(LivePushError) {
        let name = FFDemuxer.redacted(url)
        let interrupt = IOInterrupt()
        var probed: FFDemuxer?
        do {
            probed = try FFDemuxer(url: url, timeout: options.timeout, interrupt: interrupt,
                                         followsReferences: options.followsReferences)
        } catch {
            if requiresFeed { throw error }
            report(.primaryRetry(error, retryIn: .zero))
        }
        end = duration.map { $0.nanoseconds / 1000 }
        let backupDemuxer = probed == nil ? options.backup.flatMap { try? FFDemuxer(path: $0) } : nil
        let format = Self.format(of: probed ?? backupDemuxer, media: media)
        encoder = try RawFrameEncoder(video: .init(width: format.size.width, height: format.size.height, frameRate: format.frameRate),
                                      audio: .init(sampleRate: format.audio.sampleRate, channels: format.audio.channels),
                                      options: media, mixer: stages.mixer)
        self.stages = stages
        info = encoder.info
        frameDuration = Int64((1_000_000 / format.frameRate).rounded())
        backup = try options.backup.map { path throws(LivePushError) in try BackupFile(path: path, size: format.size, audio: format.audio) }
        black = try VideoFrame(width: format.size.width, height: format.size.height)
        slate = try options.slateImage.map { path throws(LivePushError) in
            try ImageLoader.loadFrame(path: path, width: format.size.width, height: format.size.height)
        } ?? black
        machine = FailoverStateMachine(options: options, hasBackup: backup != nil)
        feedAnswered = probed != nil
        self.options = options
        self.report = report
        feed = LiveFeed(url: url, name: name, opened: probed.map { ($0, interrupt) }, size: format.size,
                        frameRate: format.frameRate, audio: format.audio, options: options, report: report)
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

    /// The output's time starts at 0 with its first slot.
    var start: MediaStart? { MediaStart(presentation: 0, decode: 0) }

    /// What the input did: ``PushStats/input``.
    var stats: LiveInputStats {
        var stats = figures.withLock { $0 }
        stats.droppedFrames = feed.droppedFrames
        stats.connections = feed.connections
        return stats
    }

    /// Seconds of output made so far.
    var played: Double { Double(position.withLock { $0 }) / 1_000_000 }

    func interrupt() {
        waiter.withLock {
            stopped = true
            waiter.broadcast()
        }
        feed.stop()
    }

    func nextPacket() throws(LivePushError) -> MediaPacket? {
        try encoder.nextPacket(taking: generate)
    }

    func rewind() throws(LivePushError) {
        throw LivePushError(.invalidState, "a live input is not rewound")
    }

    func suspend() throws(LivePushError) -> [MediaPacket] {
        encoder.forceKeyframe = true
        return []
    }

    func setVideoBitrate(_ bitsPerSecond: Int) {
        encoder.videoEncoder?.setBitrate(bitsPerSecond)
    }

    // MARK: - Frame slots

    /// The next frame in timestamp order, once it is due.
    private func generate() throws(LivePushError) -> RawFrameEncoder.Next {
        let audioFormat = encoder.audioEncoder?.format
        let audioTime = audioFormat.map { $0.micros(ofSamples: nextAudioSample) } ?? .max
        let isVideo = nextVideo <= audioTime
        let time = isVideo ? nextVideo : audioTime
        // A live entry ends with its slot: pictures that start before it, sound frames mostly before it.
        if let end, time >= end - (isVideo ? 0 : (audioFormat?.micros(ofSamples: Int64(samplesPerFrame / 2)) ?? 0)) {
            feed.stop()
            return .end
        }
        guard waitUntilDue(time) else { return .end }
        position.withLock { $0 = max($0, time) }
        if isVideo {
            var picture = try pictureForSlot(at: time)
            picture.timestamp = time
            // A repeated or stock picture is shared: a filter that writes gets a copy of its own.
            stages.process(&picture, frameRate: 1_000_000 / Double(frameDuration))
            if !stages.filters.isEmpty { stages.figures.update { $0.filteredFrames += 1 } }
            nextVideo += frameDuration
            return .video(picture)
        }
        guard let audioFormat else { return .end }
        nextAudioSample += Int64(samplesPerFrame)
        switch (machine.onAir, filling) {
        case (.primary, false):
            let sourceTime = primaryClock.map { $0.source + (time - $0.output) }
            return .audio(try feed.takeAudio(count: samplesPerFrame, timestamp: time, sourceTime: sourceTime))
        case (.backup, _): return .audio(try backupAudio(time: time))
        default:
            return .audio(try AudioFrame(sampleRate: audioFormat.sampleRate, channels: audioFormat.channels,
                                         sampleCount: samplesPerFrame, timestamp: time))
        }
    }

    /// Sleeps until output time `time` is due; false once the input is stopped.
    private func waitUntilDue(_ time: Int64) -> Bool {
        if waiter.withLock({ anchor == nil }) && feedAnswered {
            // Rather than black while the feed's first frames are on their way.
            feed.awaitFirstPicture(timeout: options.timeout)
        }
        return waiter.withLock {
            let anchor = self.anchor ?? monotonicMicroseconds()
            if self.anchor == nil {
                self.anchor = anchor
                feed.trimToJitterBuffer()
            }
            while !stopped {
                let left = anchor + time - monotonicMicroseconds()
                if left <= 0 { return true }
                waiter.wait(timeout: .microseconds(left))
            }
            return false
        }
    }

    private func pictureForSlot(at time: Int64) throws(LivePushError) -> VideoFrame {
        let status = feed.status
        let decision = machine.decide(now: monotonicMicroseconds(), lastArrival: status.lastArrival,
                                      steadySince: status.steadySince, hasFrame: status.hasVideo)
        for event in decision.events {
            switch event {
            case .switched(.primary): feed.trimToJitterBuffer()
            case .switched(.backup): try restartBackup()
            default: break
            }
        }
        announce(decision.events)
        filling = decision.show == .fill
        figures.withLock {
            $0.onAir = machine.onAir
            $0.switches = machine.switches
            if filling { $0.filledFrames += 1 }
        }
        switch decision.show {
        case .primary:
            if let picture = feed.takeVideo() {
                lastPicture = picture
                primaryClock = (output: time, source: picture.timestamp)
                return picture
            }
            return fill()
        case .fill:
            return fill()
        case .backup:
            do {
                return try backup?.nextPicture(frameDuration: frameDuration) ?? black
            } catch {
                announce(machine.backupFailed(error))
                return slate
            }
        case .slate:
            return slate
        }
    }

    private func fill() -> VideoFrame {
        switch options.loss {
        case .repeatLastFrame: lastPicture ?? black
        case .black: black
        case .slate: slate
        }
    }

    private func restartBackup() throws(LivePushError) {
        do {
            try backup?.restart()
        } catch {
            announce(machine.backupFailed(error))
        }
    }

    private func backupAudio(time: Int64) throws(LivePushError) -> AudioFrame {
        do {
            if let backup { return try backup.takeAudio(count: samplesPerFrame, timestamp: time) }
        } catch {
            announce(machine.backupFailed(error))
        }
        let format = encoder.audioEncoder!.format
        return try AudioFrame(sampleRate: format.sampleRate, channels: format.channels, sampleCount: samplesPerFrame, timestamp: time)
    }

    private func announce(_ events: [InputEvent]) {
        for event in events { report(event) }
    }
}
