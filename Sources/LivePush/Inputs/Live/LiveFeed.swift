import DequeModule
import Synchronization

/// The primary of a live input: a thread (`livepush.input`) that connects to the URL, decodes
/// what arrives into frames at the channel's format, and holds them in a bounded jitter buffer
/// for the ``FailoverInput``; and that connects again, with backoff, whenever the feed fails,
/// ends or goes silent for the input timeout.
///
/// Nothing is read ahead beyond the buffer: its pace is the feed's. When the output takes
/// frames more slowly than they arrive, the oldest beyond the cap are dropped and counted.
/// The thread blocks in libavformat's reads (which have no other way to wait); it is the one
/// thread a live input costs.
final class LiveFeed: Sendable {
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
    /// The push's clock: when pictures arrived, and which are ready to go out.
    private let clock: any MonotonicClock
    private let frameDuration: Int64

    /// The jitter buffer and the connection's state, shared by the reader and the producer.
    private struct State {
        /// Pictures waiting, with when each arrived (µs, monotonic).
        var video = Deque<(picture: VideoFrame, arrival: Int64)>()
        /// Whether the feed's current connection carries sound: its pictures then wait for it.
        var feedHasAudio = false
        var audio = SampleQueue()
        var lastArrival: Int64?
        var steadySince: Int64?
        var stopped = false
        var interrupt = IOInterrupt()
        var droppedFrames = 0
        var connections = 0

        /// The pictures that may go out now, oldest first: those whose sound is in (or that
        /// waited long enough for it).
        func readyPictures(now: Int64, sampleRate: Int) -> Int {
            guard feedHasAudio else { return video.count }
            let soundEnd = audio.tailTime(sampleRate: sampleRate) ?? .min
            return video.prefix { $0.picture.timestamp <= soundEnd || now - $0.arrival >= LiveFeed.soundWait }.count
        }
    }
    private let state: Mutex<State>
    /// The demuxer the input's format was probed on: the reader thread's first connection takes it.
    private let firstDemuxer: Mutex<FFDemuxer?>
    /// Woken when frames arrived or the feed stopped: the producer waiting for the first
    /// picture, the reader waiting to connect again.
    private let changed = ProgressSignal()

    /// `opened`: the demuxer the input's format was probed on (and the interrupt it was opened
    /// with), used for the first connection.
    init(url: String, name: String, opened: sending (FFDemuxer, IOInterrupt)?, size: VideoSize, frameRate: Double, audio: AudioFormat,
         options: LiveInputOptions, clock: any MonotonicClock = SystemMonotonicClock(),
         report: @escaping @Sendable (InputEvent) -> Void) {
        self.url = url
        self.clock = clock
        self.name = name
        var initial = State()
        if let opened { initial.interrupt = opened.1 }
        state = Mutex(initial)
        firstDemuxer = Mutex(opened?.0)
        self.size = size
        audioFormat = audio
        self.options = options
        self.report = report
        frameDuration = Int64(1_000_000 / max(1, frameRate))
    }

    func start() {
        WorkerThread.start(name: "livepush.input") { self.run() }
    }

    /// Ends the thread: its blocking read is interrupted at once.
    func stop() {
        state.withLock {
            $0.stopped = true
            $0.interrupt.cancel()
        }
        changed.wake()
    }

    var status: Status {
        let sampleRate = audioFormat.sampleRate
        return state.withLock {
            Status(lastArrival: $0.lastArrival, steadySince: $0.steadySince,
                   hasVideo: $0.readyPictures(now: clock.now().microseconds, sampleRate: sampleRate) > 0)
        }
    }

    /// Pictures dropped: beyond the cap, or beyond what the output caught up on.
    var droppedFrames: Int { state.withLock { $0.droppedFrames } }
    /// Connections made to the feed.
    var connections: Int { state.withLock { $0.connections } }

    /// A picture waits, at most this long (µs), until the sound of its time has arrived: an
    /// MPEG-TS muxer holds sound back up to 0.7 s, and pictures sent before it would go out
    /// without their sound.
    static let soundWait = MediaTime.seconds(1).microseconds

    /// Waits until a picture has arrived, the feed is stopped, or `timeout` has passed.
    func awaitFirstPicture(timeout: Duration) {
        let sampleRate = audioFormat.sampleRate
        changed.wait(limit: timeout) {
            state.withLock { $0.stopped || $0.readyPictures(now: clock.now().microseconds, sampleRate: sampleRate) > 0 }
        }
    }

    /// The oldest picture ready to go out, if any. Beyond twice the jitter buffer's worth of
    /// ready ones, the oldest are dropped: the output catches up rather than run ever later.
    func takeVideo() -> VideoFrame? {
        let keep = max(1, Int(options.jitterBuffer.nanoseconds / 1000 / frameDuration))
        let sampleRate = audioFormat.sampleRate
        return state.withLock { state in
            var ready = state.readyPictures(now: clock.now().microseconds, sampleRate: sampleRate)
            guard ready > 0 else { return nil }
            while ready > 2 * keep {
                state.video.removeFirst()
                state.droppedFrames += 1
                ready -= 1
            }
            return state.video.popFirst()?.picture
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
        let jitterSamples = audioFormat.samples(inMicros: options.jitterBuffer.nanoseconds / 1000)
        let format = audioFormat
        // Taken under the lock, copied after it: the frames are values that share their samples.
        let (silence, spans) = state.withLock { state -> (Int, [(frame: AudioFrame, from: Int, to: Int, count: Int)]) in
            guard let sourceTime else {
                state.audio.dropOldest(whileMoreThan: 2 * jitterSamples + count)
                return (0, state.audio.take(count))
            }
            guard let head = state.audio.headTime(sampleRate: rate) else { return (count, []) }
            if head < sourceTime - Self.syncTolerance { state.audio.drop(before: sourceTime, sampleRate: rate) }
            // Sound that starts later than this block: silence up to it.
            let silence = head > sourceTime + Self.syncTolerance ? min(count, format.samples(inMicros: head - sourceTime)) : 0
            return (silence, state.audio.take(count - silence))
        }
        try SampleQueue.copy(spans, into: &block, at: silence)
        return block
    }

    /// Forgets what waits but the newest jitter buffer's worth: the primary goes on air again
    /// (at the start, or back from the backup) with its pictures and its sound together.
    func trimToJitterBuffer() {
        let keepVideo = max(1, Int(options.jitterBuffer.nanoseconds / 1000 / frameDuration))
        let keepAudio = audioFormat.samples(inMicros: options.jitterBuffer.nanoseconds / 1000)
        let sampleRate = audioFormat.sampleRate
        state.withLock { state in
            var ready = state.readyPictures(now: clock.now().microseconds, sampleRate: sampleRate)
            while ready > keepVideo {
                state.video.removeFirst()
                ready -= 1
            }
            state.audio.dropOldest(keepingAtLeast: keepAudio)
        }
    }

    // MARK: - The reader thread

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func run() {
        var failures = 0
        while !isStopped {
            let opened = firstDemuxer.withLock { $0.take() }
            let interrupt = state.withLock { state -> IOInterrupt in
                // A fresh one per connection: an expired deadline stays expired.
                if opened == nil { state.interrupt = IOInterrupt() }
                if state.stopped { state.interrupt.cancel() }
                return state.interrupt
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
                let hasAudio = decoder.hasAudio
                state.withLock { state in
                    state.connections += 1
                    // What an earlier connection left has other timestamps, and is old news.
                    state.video.removeAll()
                    state.audio.removeAll()
                    state.feedHasAudio = hasAudio
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
                state.withLock { $0.steadySince = nil }
                report(.primaryRetry(error, retryIn: delay))
                // The backoff; `stop` ends it at once.
                changed.wait(limit: delay) { isStopped }
            }
        }
    }

    private func deliver(_ frames: [FeedDecoder.Frame]) {
        let now = clock.now().microseconds
        // The hard cap, whatever the output does: a second and a half of pictures (some may
        // wait for their sound), a second of sound.
        let maxVideo = max(2, Int(1_500_000 / frameDuration))
        let maxAudio = audioFormat.sampleRate
        state.withLock { state in
            if let last = state.lastArrival, now - last > Self.steadyGap { state.steadySince = nil }
            if state.steadySince == nil { state.steadySince = now }
            state.lastArrival = now
            for frame in frames {
                switch frame {
                case .video(let picture):
                    state.video.append((picture, now))
                case .audio(let sound):
                    state.audio.append(sound)
                }
            }
            while state.video.count > maxVideo {
                state.video.removeFirst()
                state.droppedFrames += 1
            }
            state.audio.dropOldest(whileMoreThan: maxAudio)
        }
        changed.wake()
    }
}
