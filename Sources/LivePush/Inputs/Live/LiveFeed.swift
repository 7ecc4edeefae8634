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
/// thread a live input costs (an HLS input has a second, its fetcher).
///
/// An HLS input (``HLSFeedSource``) is read differently: its segments come from its own
/// fetcher, a demuxer reads them (a new one after each discontinuity, without a retry), and
/// the reader paces what it decodes (``HLSPacer``), so that a segment that arrives whole plays
/// whole; the tags' cues wait beside the pictures for the one they belong to (``takeCues()``).
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
    /// An HLS input's segments; nil: libavformat reads the URL.
    private let hls: HLSFeedSource?

    /// The jitter buffer and the connection's state, shared by the reader and the producer.
    private struct State {
        /// Pictures waiting, with when each arrived (µs, monotonic) and its number.
        var video = Deque<(picture: VideoFrame, arrival: Int64, number: Int64)>()
        /// Pictures delivered so far: the next one's number.
        var delivered: Int64 = 0
        /// The number of the picture taken (or dropped) last.
        var lastTaken: Int64 = -1
        /// An HLS input's cues, each with the number of the picture it goes with.
        var cues = Deque<(picture: Int64, section: [UInt8])>()
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
    /// The HLS reader's own waits (its pace, its backoff), woken by a stop or a segment that
    /// arrives: on `changed` it could take a wake meant for the producer's first picture.
    private let readerWake = ProgressSignal()

    /// `opened`: the demuxer the input's format was probed on (and the interrupt it was opened
    /// with), used for the first connection.
    init(url: String, name: String, opened: sending (FFDemuxer, IOInterrupt)?, size: VideoSize, frameRate: Double, audio: AudioFormat,
         options: LiveInputOptions, clock: any MonotonicClock = SystemMonotonicClock(), hls: HLSFeedSource? = nil,
         report: @escaping @Sendable (InputEvent) -> Void) {
        self.hls = hls
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
        // A segment that arrives ends the reader's wait between two attempts.
        hls?.queue.onArrival { [readerWake] in readerWake.wake() }
        WorkerThread.start(name: "livepush.input") {
            if let hls = self.hls { self.run(hls) } else { self.run() }
        }
    }

    /// Ends the thread: its blocking read is interrupted at once.
    func stop() {
        state.withLock {
            $0.stopped = true
            $0.interrupt.cancel()
        }
        hls?.stop()
        changed.wake()
        readerWake.wake()
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

    /// Waits until a picture has arrived, the feed is stopped, or `timeout` has passed (plus,
    /// for an HLS input, its buffer: the first picture is handed over one target duration late).
    func awaitFirstPicture(timeout: Duration) {
        let sampleRate = audioFormat.sampleRate
        let limit = timeout + .microseconds(hls?.startDelay ?? 0)
        changed.wait(limit: limit) {
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
                state.lastTaken = state.video.removeFirst().number
                state.droppedFrames += 1
                ready -= 1
            }
            guard let taken = state.video.popFirst() else { return nil }
            state.lastTaken = taken.number
            return taken.picture
        }
    }

    /// The cues of the pictures taken (or dropped) so far, in order; those of pictures dropped
    /// more than a second's worth of pictures ago are stale (the feed was off air) and go.
    func takeCues() -> [[UInt8]] {
        let stale = Int64(1_000_000 / frameDuration)
        return state.withLock { state in
            var due: [[UInt8]] = []
            while let first = state.cues.first, first.picture <= state.lastTaken {
                state.cues.removeFirst()
                if first.picture >= state.lastTaken - stale { due.append(first.section) }
            }
            return due
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
                state.lastTaken = state.video.removeFirst().number
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
                let delay = reportRetry(error, failures: failures)
                // The backoff; `stop` ends it at once.
                changed.wait(limit: delay) { isStopped }
            }
        }
    }

    /// An HLS input's reader: a demuxer over the fetched segments, a new one after each
    /// boundary (no retry, nothing forgotten, the pace goes on), decoded at the pace of the
    /// media (``HLSPacer``). A demuxer that fails (no segment within its wait, a segment that
    /// does not decode) is a failure as for any feed: `inputRetry`, a backoff that a segment
    /// arriving ends, and the buffer forgotten.
    private func run(_ hls: HLSFeedSource) {
        var failures = 0
        var continuing = false
        var pacer = HLSPacer(startDelay: hls.startDelay, lead: options.jitterBuffer.nanoseconds / 1000)
        while !isStopped {
            let opened = firstDemuxer.withLock { $0.take() }
            do throws(LivePushError) {
                let demuxer: FFDemuxer
                if let opened { demuxer = opened } else { demuxer = try hls.openDemuxer() }
                guard let source = demuxer.byteSource as? HLSByteSource else {
                    throw LivePushError(.mediaReadFailed, "\(name): not read from its segments")
                }
                let decoder = try FeedDecoder(demuxer: demuxer, size: size, audio: audioFormat)
                let (hasAudio, fresh) = (decoder.hasAudio, !continuing)
                state.withLock { state in
                    state.feedHasAudio = hasAudio
                    guard fresh else { return }
                    state.connections += 1
                    state.lastTaken = state.delivered - 1
                    state.video.removeAll()
                    state.audio.removeAll()
                    state.cues.removeAll()
                }
                if continuing {
                    pacer.boundary()
                } else {
                    pacer = HLSPacer(startDelay: hls.startDelay, lead: options.jitterBuffer.nanoseconds / 1000)
                }
                continuing = false
                var frames: [FeedDecoder.Frame] = []
                while !isStopped {
                    guard try decoder.decodeNext(into: &frames) else {
                        try decoder.drain(into: &frames)
                        if !frames.isEmpty, pace(frames, &pacer, hasVideo: decoder.hasVideo) { deliver(frames) }
                        guard source.endedAtBoundary else {
                            throw source.failure ?? LivePushError(.mediaReadFailed, "\(name): the playlist ended")
                        }
                        continuing = true
                        break
                    }
                    let packet = decoder.lastPacket
                    if packet.isVideo || !decoder.hasVideo {
                        let cues = source.cues(atPacket: packet.position, time: packet.time)
                        // The segment's first picture is the next one delivered.
                        if !cues.isEmpty { state.withLock { state in for cue in cues.suffix(64) { state.cues.append((state.delivered, cue)) } } }
                    }
                    if frames.isEmpty { continue }
                    guard pace(frames, &pacer, hasVideo: decoder.hasVideo) else { break }
                    deliver(frames)
                    frames.removeAll(keepingCapacity: true)
                    failures = 0
                }
            } catch {
                guard !isStopped else { break }
                failures += 1
                continuing = false
                let delay = reportRetry(error, failures: failures)
                // The backoff; a segment that arrives, or `stop`, ends it at once.
                readerWake.wait(limit: delay) { isStopped || hls.queue.hasSegment }
            }
        }
    }

    /// The feed failed for the `failures`-th time in a row: `inputRetry` with the backoff's
    /// delay (doubling from `retryInterval` up to `maxRetryInterval`), which it returns; the
    /// feed is no longer steady.
    private func reportRetry(_ error: LivePushError, failures: Int) -> Duration {
        var delay = options.retryInterval
        for _ in 1..<min(failures, 16) { delay = min(delay * 2, options.maxRetryInterval) }
        state.withLock { $0.steadySince = nil }
        report(.primaryRetry(error, retryIn: delay))
        return delay
    }

    /// Waits until `frames` are due: their first picture's (or, without video, their sound's)
    /// media time, as the pacer places it. False once stopped.
    private func pace(_ frames: [FeedDecoder.Frame], _ pacer: inout HLSPacer, hasVideo: Bool) -> Bool {
        let media = frames.lazy.compactMap { frame -> Int64? in
            switch frame {
            case .video(let picture): picture.timestamp
            case .audio(let sound): hasVideo ? nil : sound.timestamp
            }
        }.first
        guard let media else { return !isStopped }
        let due = pacer.releaseTime(media: media, now: clock.now().microseconds, frameDuration: frameDuration)
        let left = due - clock.now().microseconds
        if left > 0 { readerWake.wait(limit: .microseconds(left)) { isStopped } }
        return !isStopped
    }

    private func deliver(_ frames: [FeedDecoder.Frame]) {
        let now = clock.now().microseconds
        // The hard cap, whatever the output does: a second and a half of pictures (some may
        // wait for their sound), a second of sound.
        let maxVideo = max(2, Int(1_500_000 / frameDuration))
        let maxAudio = audioFormat.sampleRate
        state.withLock { state in
            // An HLS input's cues wait for their pictures; a feed off air for long keeps the newest.
            while state.cues.count > 64 { state.cues.removeFirst() }
            if let last = state.lastArrival, now - last > Self.steadyGap { state.steadySince = nil }
            if state.steadySince == nil { state.steadySince = now }
            state.lastArrival = now
            for frame in frames {
                switch frame {
                case .video(let picture):
                    state.video.append((picture, now, state.delivered))
                    state.delivered += 1
                case .audio(let sound):
                    state.audio.append(sound)
                }
            }
            while state.video.count > maxVideo {
                state.lastTaken = state.video.removeFirst().number
                state.droppedFrames += 1
            }
            state.audio.dropOldest(whileMoreThan: maxAudio)
        }
        changed.wake()
    }
}
