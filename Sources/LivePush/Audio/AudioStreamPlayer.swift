/// Plays one audio source into the mix: the BGM, or one sound effect.
///
/// A decoder thread of its own opens the source (which may be a slow or stalling HTTP
/// server), decodes and resamples it into a bounded ring buffer (~2 s) and then waits for
/// room; the mixer takes samples from the ring on the pipeline thread. So a stalled download
/// never stalls the push: the mixer finds the ring empty and the music is silent (its position
/// does not move) until data comes back or the download timeout ends it.
///
/// Local files are different: decoding one is far faster than real time, so when the ring
/// runs dry the mixer waits (bounded) for the decoder instead of inserting silence. That keeps
/// the music intact in `.asFastAsPossible` pushes, which consume audio faster than real time.
/// A network source instead buffers half a second before it plays, and again after running dry.
final class AudioStreamPlayer: @unchecked Sendable {
    enum Notice: Sendable {
        /// The source opened; its duration in microseconds (0 when unknown).
        case opened(duration: Int64)
        /// Opening or reading failed (`bgmOpenFailed`, `bgmDownloadTimeout`); the player ended.
        case failed(LivePushError)
    }

    /// What one `mix` call did.
    struct Outcome {
        /// Samples per channel taken from the source.
        var samples = 0
        /// Position in the current pass, samples (what has actually been mixed).
        var position: Int64 = 0
        /// Loop passes completed (mixed to their end).
        var pass = 0
        /// The source ended (not looping) and everything it produced has been mixed.
        var finished = false
    }

    let source: String
    let loop: Bool
    let isNetwork: Bool
    private let timeout: Duration
    private let onNotice: @Sendable (Notice) -> Void
    private let interrupt = IOInterrupt()
    private let lock = ConditionLock()

    /// Longest a mix call waits for a local decoder that is behind.
    static let localWaitLimit: Duration = .seconds(1)
    static let ringCapacity = 96_000

    // Guarded by `lock`.
    private var ring = AudioRingBuffer(channels: 2, capacity: AudioStreamPlayer.ringCapacity)
    private var format: AudioFormat?
    /// Bumped on every format change, so a decoder never writes samples of the old format.
    private var generation = 0
    private var ended = false
    private var failed = false
    private var stopped = false
    /// Network sources: whether enough is buffered to play.
    private var ready = false
    /// Opening the source is over: it opened (and the owner was told), or it failed.
    private var openingOver = false
    private var written: Int64 = 0
    private var consumed: Int64 = 0
    /// Values of `written` where a new loop pass begins, and where the current pass began in `consumed`.
    private var passBoundaries: [Int64] = []
    private var passStart: Int64 = 0
    private var passesDone = 0

    init(source: String, loop: Bool, timeout: Duration, onNotice: @escaping @Sendable (Notice) -> Void) {
        self.source = source
        self.loop = loop
        self.timeout = timeout
        self.onNotice = onNotice
        isNetwork = AudioFileDecoder.isNetworkSource(source)
    }

    func start(format: AudioFormat?) {
        if let format { setFormat(format) }
        WorkerThread.start(name: "livepush.audio") { self.run() }
    }

    /// Ends the player: blocking I/O is interrupted, the thread exits, nothing more is mixed.
    func stop() {
        interrupt.cancel()
        lock.withLock {
            stopped = true
            lock.broadcast()
        }
    }

    /// The push's format; a change drops what was decoded for the old one.
    func setFormat(_ newFormat: AudioFormat) {
        lock.withLock { setFormatLocked(newFormat) }
    }

    private func setFormatLocked(_ newFormat: AudioFormat) {
        guard format != newFormat else { return }
        format = newFormat
        generation += 1
        ring.reset(channels: newFormat.channels)
        written = 0
        consumed = 0
        passBoundaries = []
        passStart = 0
        passesDone = 0
        ready = false
        lock.broadcast()
    }

    /// Waits (at most `limit`) until a local source has opened or failed: opening a file takes
    /// milliseconds, and music started before a push must be heard from its first frame. A
    /// network source is not waited for; it buffers while the push goes on.
    func awaitOpening(limit: Duration) {
        guard !isNetwork else { return }
        _ = lock.withLock { lock.wait(while: { !openingOver && !ended && !stopped }, limit: limit) }
    }

    /// Adds up to `frame.sampleCount` samples of the source, times `gain`, into `frame`.
    func mix(into frame: inout AudioFrame, gain: Float) throws(LivePushError) -> Outcome {
        let wanted = frame.sampleCount
        for c in 0..<frame.channels { try AudioLimiter.mutate(&frame, c) { _ in } }  // make it writable first
        return lock.withLock { () -> Outcome in
            let frameFormat = AudioFormat(sampleRate: frame.sampleRate, channels: frame.channels)
            guard format == frameFormat else {
                setFormatLocked(frameFormat)
                return Outcome()
            }
            if !isNetwork {
                lock.wait(while: { ring.count < wanted && !ended && !stopped }, limit: Self.localWaitLimit)
            } else if !ready {
                guard ring.count >= frameFormat.sampleRate / 2 || ended else {
                    return Outcome(position: consumed - passStart, pass: passesDone)
                }
                ready = true
            }
            let got = stopped ? 0 : ring.read(upTo: wanted) { channel, offset, samples in
                _ = try? frame.withMutableChannel(channel) { out in
                    for i in 0..<samples.count { out[offset + i] += samples[i] * gain }
                }
            }
            if isNetwork && got < wanted && !ended { ready = false }
            consumed += Int64(got)
            while let boundary = passBoundaries.first, consumed >= boundary {
                passStart = boundary
                passesDone += 1
                passBoundaries.removeFirst()
            }
            if got > 0 { lock.broadcast() }
            return Outcome(samples: got, position: consumed - passStart, pass: passesDone, finished: ended && !failed && ring.isEmpty)
        }
    }

    // MARK: - Decoder thread

    private func run() {
        let decoder: AudioFileDecoder
        do {
            decoder = try AudioFileDecoder(source: source, timeout: timeout, interrupt: interrupt)
        } catch {
            end(failure: error)
            return
        }
        guard !interrupt.isCancelled else { return }
        onNotice(.opened(duration: decoder.duration))
        // After the notice, so a mixer that waited for the opening finds the music opened.
        lock.withLock {
            openingOver = true
            lock.broadcast()
        }
        var passSamples: Int64 = 0
        do {
            while let (format, generation) = awaitFormat() {
                let more = try decoder.decodeNext(format: format) { planes in
                    passSamples += Int64(planes.first?.count ?? 0)
                    write(planes, generation: generation)
                }
                if more { continue }
                if interrupt.isCancelled { return }
                // A pass that produced nothing would loop forever.
                if loop && passSamples > 0 && decoder.rewind() {
                    passSamples = 0
                    lock.withLock { passBoundaries.append(written) }
                    continue
                }
                end(failure: nil)
                return
            }
        } catch {
            end(failure: error)
        }
    }

    /// The format to decode to, once known; nil when stopped.
    private func awaitFormat() -> (AudioFormat, Int)? {
        lock.withLock {
            while format == nil && !stopped { lock.wait() }
            guard let format, !stopped else { return nil }
            return (format, generation)
        }
    }

    /// Copies decoded samples into the ring, waiting for room as the mixer consumes.
    private func write(_ planes: [UnsafeBufferPointer<Float>], generation expected: Int) {
        let total = planes.first?.count ?? 0
        lock.withLock {
            var offset = 0
            while offset < total && !stopped && generation == expected {
                if ring.space == 0 {
                    lock.wait()
                    continue
                }
                let n = ring.write(planes, from: offset)
                offset += n
                written += Int64(n)
                lock.broadcast()
            }
        }
    }

    private func end(failure: LivePushError?) {
        let report = lock.withLock { () -> Bool in
            ended = true
            failed = failure != nil
            lock.broadcast()
            return !stopped
        }
        if let failure, report { onNotice(.failed(failure)) }
    }
}
