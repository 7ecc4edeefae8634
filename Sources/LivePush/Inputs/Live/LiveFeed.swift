import DequeModule

/// The primary of a live input: a thread (`livepush.input`) that connects to the URL, decodes
/// what arrives into frames at the channel's format, and holds them in a bounded jitter buffer
/// for the ``FailoverInput``; and that connects again, with backoff, whenever the feed fails,
/// ends or goes silent for the input timeout.
///
/// Nothing is read ahead beyond the buffer: its pace is the feed's. When the output takes
/// frames more slowly than they arrive, the oldest beyond the cap are dropped and counted.
/// The thread blocks in libavformat's reads (which have no other way to wait); it is the one
/// thread a live input costs.
final class LiveFeed: @unchecked Sendable {
    /// What the output needs to decide a frame slot.
    struct Status {
        var lastArrival: Int64?
        var steadySince: Int64?
        var hasVideo: Bool
    }

    /// A gap longer than this between two frames restarts the feed's steady time.
    static let steadyGap: Int64 = 500_000

    let name: String
    private let url: String
    private let size: VideoSize
    private let audioFormat: AudioFormat
    private let options: LiveInputOptions
    private let report: @Sendable (InputEvent) -> Void
    private let frameDuration: Int64

    private let lock = ConditionLock()
    // Guarded by `lock`.
    /// Pictures waiting, with when each arrived (µs, monotonic).
    private var video = Deque<(picture: VideoFrame, arrival: Int64)>()
    /// Whether the feed's current connection carries sound: its pictures then wait for it.
    private var feedHasAudio = false
    private var audio = SampleQueue()
    private var lastArrival: Int64?
    private var steadySince: Int64?
    private var stopped = false
    private var interrupt = IOInterrupt()
    private var firstDemuxer: FFDemuxer?
    private(set) var droppedFrames = 0
    private(set) var connections = 0

    /// `opened`: the demuxer the input's format was probed on (and the interrupt it was opened
    /// with), used for the first connection.
    init(url: String, name: String, opened: (FFDemuxer, IOInterrupt)?, size: VideoSize, frameRate: Double, audio: AudioFormat,
         options: LiveInputOptions, report: @escaping @Sendable (InputEvent) -> Void) {
        self.url = url
        self.name = name
        firstDemuxer = opened?.0
        if let opened { interrupt = opened.1 }
        self.size = size
        audioFormat = audio
        self.options = options
        self.report = report
        frameDuration = Int64(1_000_000 / max(1, frameRate))
    }

    func start() {
        let transfer = UncheckedTransfer(value: self)
        WorkerThread.start(name: "livepush.input") { transfer.value.run() }
    }

    /// Ends the thread: its blocking read is interrupted at once.
    func stop() {
        lock.withLock {
            stopped = true
            interrupt.cancel()
            lock.broadcast()
        }
    }

    var status: Status {
        lock.withLock { Status(lastArrival: lastArrival, steadySince: steadySince, hasVideo: readyPictures(now: monotonicMicroseconds()) > 0) }
    }

    /// A picture waits, at most this long (µs), until the sound of its time has arrived: an
    /// MPEG-TS muxer holds sound back up to 0.7 s, and pictures sent before it would go out
    /// without their sound.
    static let soundWait: Int64 = 1_000_000

    /// The pictures that may go out now, oldest first: those whose sound is in (or that waited
    /// long enough for it). Called with the lock held.
    private func readyPictures(now: Int64) -> Int {
        guard feedHasAudio else { return video.count }
        let soundEnd = audio.tailTime(sampleRate: audioFormat.sampleRate) ?? .min
        return video.prefix { $0.picture.timestamp <= soundEnd || now - $0.arrival >= Self.soundWait }.count
    }

    /// Waits until a picture has arrived, the feed is stopped, or `timeout` has passed.
    func awaitFirstPicture(timeout: Duration) {
        _ = lock.withLock { lock.wait(while: { readyPictures(now: monotonicMicroseconds()) == 0 && !stopped }, limit: timeout) }
    }

    /// The oldest picture ready to go out, if any. Beyond twice the jitter buffer's worth of
    /// ready ones, the oldest are dropped: the output catches up rather than run ever later.
    func takeVideo() -> VideoFrame? {
        lock.withLock {
            let keep = max(1, Int(options.jitterBuffer.nanoseconds / 1000 / frameDuration))
            var ready = readyPictures(now: monotonicMicroseconds())
            guard ready > 0 else { return nil }
            while ready > 2 * keep {
                video.removeFirst()
                droppedFrames += 1
                ready -= 1
            }
            return video.popFirst()?.picture
        }
    }

    /// The sound and the pictures may be this far apart (µs) before the sound is moved: a
    /// frame of sound, about.
    static let syncTolerance: Int64 = 40_000

    /// `count` samples of sound: what the feed delivered, padded with silence when it has less.
    /// `sourceTime`: where on the feed's own timeline these samples belong (the pictures on air
    /// say), so that sound that arrives later or earlier than its pictures (an MPEG-TS muxer
    /// holds sound back up to 0.7 s) still plays with them; nil takes the sound as it comes.
    func takeAudio(count: Int, timestamp: Int64, sourceTime: Int64?) throws(LivePushError) -> AudioFrame {
        var block = try AudioFrame(sampleRate: audioFormat.sampleRate, channels: audioFormat.channels,
                                   sampleCount: count, timestamp: timestamp)
        let rate = audioFormat.sampleRate
        // Taken under the lock, copied after it: the frames are values that share their samples.
        let (silence, spans) = lock.withLock { () -> (Int, [(frame: AudioFrame, from: Int, to: Int, count: Int)]) in
            guard let sourceTime else {
                audio.dropOldest(whileMoreThan: 2 * audioFormat.samples(inMicros: options.jitterBuffer.nanoseconds / 1000) + count)
                return (0, audio.take(count))
            }
            guard let head = audio.headTime(sampleRate: rate) else { return (count, []) }
            if head < sourceTime - Self.syncTolerance { audio.drop(before: sourceTime, sampleRate: rate) }
            // Sound that starts later than this block: silence up to it.
            let silence = head > sourceTime + Self.syncTolerance ? min(count, audioFormat.samples(inMicros: head - sourceTime)) : 0
            return (silence, audio.take(count - silence))
        }
        try SampleQueue.copy(spans, into: &block, at: silence)
        return block
    }

    /// Forgets what waits but the newest jitter buffer's worth: the primary goes on air again
    /// (at the start, or back from the backup) with its pictures and its sound together.
    func trimToJitterBuffer() {
        lock.withLock {
            let keepVideo = max(1, Int(options.jitterBuffer.nanoseconds / 1000 / frameDuration))
            var ready = readyPictures(now: monotonicMicroseconds())
            while ready > keepVideo {
                video.removeFirst()
                ready -= 1
            }
            audio.dropOldest(keepingAtLeast: audioFormat.samples(inMicros: options.jitterBuffer.nanoseconds / 1000))
        }
    }

    // MARK: - The reader thread

    private var isStopped: Bool { lock.withLock { stopped } }

    private func run() {
        var failures = 0
        while !isStopped {
            let (interrupt, opened) = lock.withLock { () -> (IOInterrupt, FFDemuxer?) in
                // A fresh one per connection: an expired deadline stays expired.
                if firstDemuxer == nil { self.interrupt = IOInterrupt() }
                if stopped { self.interrupt.cancel() }
                defer { firstDemuxer = nil }
                return (self.interrupt, firstDemuxer)
            }
            do throws(LivePushError) {
                let demuxer: FFDemuxer
                if let opened {
                    demuxer = opened
                } else {
                    demuxer = try FFDemuxer(url: url, timeout: options.timeout, interrupt: interrupt,
                                         followsReferences: options.followsReferences)
                }
                let decoder = try FeedDecoder(demuxer: demuxer, size: size, audio: audioFormat)
                lock.withLock {
                    connections += 1
                    // What an earlier connection left has other timestamps, and is old news.
                    video.removeAll()
                    audio.removeAll()
                    feedHasAudio = decoder.hasAudio
                }
                var frames: [FeedDecoder.Frame] = []
                let timeout = max(1000, options.timeout.nanoseconds / 1000)
                while !isStopped {
                    interrupt.arm(micros: timeout)
                    guard try decoder.decodeNext(into: &frames) else {
                        throw LivePushError(.mediaReadFailed, "\(name): the feed ended")
                    }
                    if frames.isEmpty { continue }
                    deliver(frames)
                    frames.removeAll(keepingCapacity: true)
                    failures = 0
                }
            } catch {
                guard !isStopped else { break }
                failures += 1
                var delay = options.retryInterval
                for _ in 1..<min(failures, 16) { delay = min(delay * 2, options.maxRetryInterval) }
                lock.withLock { steadySince = nil }
                report(.primaryRetry(error, retryIn: delay))
                lock.withLock { if !stopped { lock.wait(timeout: delay) } }
            }
        }
    }

    private func deliver(_ frames: [FeedDecoder.Frame]) {
        let now = monotonicMicroseconds()
        lock.withLock {
            if let last = lastArrival, now - last > Self.steadyGap { steadySince = nil }
            if steadySince == nil { steadySince = now }
            lastArrival = now
            for frame in frames {
                switch frame {
                case .video(let picture):
                    video.append((picture, now))
                case .audio(let sound):
                    audio.append(sound)
                }
            }
            // The hard cap, whatever the output does: a second and a half of pictures (some may
            // wait for their sound), a second of sound.
            let maxVideo = max(2, Int(1_500_000 / frameDuration))
            while video.count > maxVideo {
                video.removeFirst()
                droppedFrames += 1
            }
            audio.dropOldest(whileMoreThan: audioFormat.sampleRate)
            lock.broadcast()
        }
    }
}
