import LivePushWire

/// The producer's side of a ``FailoverInput``: the frame slots of the output's own timeline,
/// what each shows (``FailoverStateMachine``), its pictures handed out raw for the push's encode
/// after the clock (``VideoEncodeStage``, with the filters) and its sound raw for the push's
/// sound encode (``AudioEncodeStage``, with the music). Used by the producer thread
/// only, so it is not Sendable: the input keeps it in a `Mutex` that only the producer takes.
/// What other threads read or do (the figures, the position, a stop) is in the feed and in
/// ``LiveInputProgress``.
final class FailoverSlots {
    private let frames: RawFrameQueue
    private let feed: LiveFeed
    private let backup: BackupFile?
    private let progress: LiveInputProgress
    private let options: LiveInputOptions
    private let report: @Sendable (InputEvent) -> Void
    private let frameDuration: Int64
    private let samplesPerFrame = 1024
    private let black: VideoFrame
    private let slate: VideoFrame
    /// Output time (µs) at which the input ends, if it does.
    private let end: Int64?
    /// Whether the feed answered when the input opened: the output then starts with its first picture.
    private let feedAnswered: Bool
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
    /// An HLS input's cues for the pictures just taken, handed out before the next packet.
    private var cues: [MediaPacket] = []

    init(frames: RawFrameQueue, feed: LiveFeed, backup: BackupFile?, progress: LiveInputProgress,
         options: LiveInputOptions, report: @escaping @Sendable (InputEvent) -> Void, frameDuration: Int64,
         black: VideoFrame, slate: VideoFrame, end: Int64?, feedAnswered: Bool) {
        self.frames = frames
        self.feed = feed
        self.backup = backup
        self.progress = progress
        self.options = options
        self.report = report
        self.frameDuration = frameDuration
        self.black = black
        self.slate = slate
        self.end = end
        self.feedAnswered = feedAnswered
        machine = FailoverStateMachine(options: options, hasBackup: backup != nil)
    }

    func nextPacket() throws(LivePushError) -> MediaPacket? {
        if !cues.isEmpty { return cues.removeFirst() }
        let packet = try frames.nextPacket(taking: generate)
        // Cues found while making it go first: they belong to a picture it made.
        guard !cues.isEmpty else { return packet }
        if let packet { cues.append(packet) }
        return cues.removeFirst()
    }

    /// A cue at output time `time` (the picture it goes with): its section with the splice
    /// moved there, since an HLS tag places its cue by its segment, whatever time the section
    /// says; a section that does not parse goes as it is, for the push to refuse and report.
    private func cue(_ section: [UInt8], at time: Int64) -> MediaPacket {
        guard let parsed = try? SpliceInfoSection(parsing: section) else { return .spliceSection(section, at: time) }
        return .spliceSection(parsed.restamped(toTicks: AdCue.ticks(time)).encoded(), at: time)
    }

    func suspend() {
        frames.forceKeyframe = true
    }

    func requestKeyframe(atOrAfter time: Int64) {
        frames.requestKeyframe(atOrAfter: time)
    }

    /// The next frame in timestamp order, once it is due.
    private func generate() throws(LivePushError) -> RawFrameQueue.Next {
        let audioFormat = frames.audioFormat
        let audioTime = audioFormat.map { $0.micros(ofSamples: nextAudioSample) } ?? .max
        let isVideo = nextVideo <= audioTime
        let time = isVideo ? nextVideo : audioTime
        // A live entry ends with its slot: pictures that start before it, sound frames mostly before it.
        if let end, time >= end - (isVideo ? 0 : (audioFormat?.micros(ofSamples: Int64(samplesPerFrame / 2)) ?? 0)) {
            feed.stop()
            return .end
        }
        guard waitUntilDue(time) else { return .end }
        progress.didSend(upTo: time)
        if isVideo {
            var picture = try pictureForSlot(at: time)
            picture.timestamp = time
            // A repeated or stock picture is shared: a filter (after the clock) that writes gets a copy of its own.
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
        let anchor: Int64
        if let known = self.anchor {
            anchor = known
        } else {
            if feedAnswered {
                // Rather than black while the feed's first frames are on their way.
                feed.awaitFirstPicture(timeout: options.timeout)
            }
            anchor = progress.clock.now().microseconds
            self.anchor = anchor
            feed.trimToJitterBuffer()
        }
        return progress.sleep(until: anchor + time)
    }

    private func pictureForSlot(at time: Int64) throws(LivePushError) -> VideoFrame {
        let status = feed.status
        let decision = machine.decide(now: progress.clock.now().microseconds, lastArrival: status.lastArrival,
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
        let (onAir, switches, filling) = (machine.onAir, machine.switches, filling)
        progress.figures.withLock {
            $0.onAir = onAir
            $0.switches = switches
            if filling { $0.filledFrames += 1 }
        }
        switch decision.show {
        case .primary:
            if let picture = feed.takeVideo() {
                lastPicture = picture
                primaryClock = (output: time, source: picture.timestamp)
                cues += feed.takeCues().map { cue($0, at: time) }
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
        let format = frames.audioFormat!
        return try AudioFrame(sampleRate: format.sampleRate, channels: format.channels, sampleCount: samplesPerFrame, timestamp: time)
    }

    private func announce(_ events: [InputEvent]) {
        for event in events { report(event) }
    }
}
