import Synchronization

/// Plays one audio source into the mix: the BGM, or one sound effect.
///
/// Jobs on a worker pool open the source (which may be a slow or stalling HTTP server),
/// decode and resample it into a bounded ring buffer (~2 s), and return once the ring is full;
/// the mixer takes samples from the ring on the pipeline thread and asks for another job when
/// a quarter of the ring is free. So the player holds no thread while its ring is full, and a
/// stalled download never stalls the push: the mixer finds the ring empty and the music is
/// silent (its position does not move) until data comes back or the download timeout ends it.
/// Network sources decode on ``ConnectionWorkers/fetchingAudio`` (a read may block for the
/// timeout), local files on ``ConnectionWorkers/decodingAudio``.
///
/// Local files are different: decoding one is far faster than real time, so when the ring
/// runs dry the mixer waits (bounded) for the decoder instead of inserting silence. That keeps
/// the music intact in `.asFastAsPossible` pushes, which consume audio faster than real time.
/// A network source instead buffers half a second before it plays, and again after running dry.
final class AudioStreamPlayer: Sendable {
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
    private let state = Mutex(PlayerState())
    /// Used by the decode jobs alone, one at a time.
    private let decoding = Mutex(DecodeState())
    private let drain: SerialDrain
    /// Wakes a mixer waiting for a local decoder (or for the opening).
    private let progress = ProgressSignal()

    /// Longest a mix call waits for a local decoder that is behind.
    static let localWaitLimit: Duration = .seconds(1)
    static let ringCapacity = 96_000
    /// Free room in the ring (samples) at which the mixer asks for a decode job.
    static let refillRoom = ringCapacity / 4

    init(source: String, loop: Bool, timeout: Duration, onNotice: @escaping @Sendable (Notice) -> Void) {
        self.source = source
        self.loop = loop
        self.timeout = timeout
        self.onNotice = onNotice
        isNetwork = AudioFileDecoder.isNetworkSource(source)
        drain = SerialDrain(on: isNetwork ? .fetchingAudio : .decodingAudio)
    }

    /// Opens the source on a decode job; decoding starts once the format is known.
    func start(format: AudioFormat?) {
        if let format { setFormat(format) }
        decode()
    }

    /// Ends the player: blocking I/O is interrupted, nothing more is mixed, and a last job
    /// closes the source.
    func stop() {
        interrupt.cancel()
        state.withLock { $0.stopped = true }
        progress.wake()
        decode()
    }

    /// The push's format; a change drops what was decoded for the old one.
    func setFormat(_ newFormat: AudioFormat) {
        if state.withLock({ $0.setFormat(newFormat) }) { decode() }
    }

    /// Waits (at most `limit`) until a local source has opened or failed: opening a file takes
    /// milliseconds, and music started before a push must be heard from its first frame. A
    /// network source is not waited for; it buffers while the push goes on.
    func awaitOpening(limit: Duration) {
        guard !isNetwork else { return }
        progress.wait(limit: limit) { state.withLock { $0.openingOver || $0.ended || $0.stopped } }
    }

    /// Adds up to `frame.sampleCount` samples of the source, times `gain`, into `frame`.
    func mix(into frame: inout AudioFrame, gain: Float) throws(LivePushError) -> Outcome {
        let wanted = frame.sampleCount
        for c in 0..<frame.channels { try AudioLimiter.mutate(&frame, c) { _ in } }  // make it writable first
        let frameFormat = AudioFormat(sampleRate: frame.sampleRate, channels: frame.channels)
        if !isNetwork {
            let behind = state.withLock { s in s.format == frameFormat && s.ring.count < wanted && !s.ended && !s.stopped }
            if behind {
                decode()
                progress.wait(limit: Self.localWaitLimit) {
                    state.withLock { s in s.format != frameFormat || s.ring.count >= wanted || s.ended || s.stopped }
                }
            }
        }
        let (outcome, refill) = state.withLock { s -> (Outcome, Bool) in
            guard s.format == frameFormat else {
                return (Outcome(), s.setFormat(frameFormat))
            }
            if isNetwork && !s.ready {
                guard s.ring.count >= frameFormat.sampleRate / 2 || s.ended else {
                    return (Outcome(position: s.consumed - s.passStart, pass: s.passesDone), false)
                }
                s.ready = true
            }
            let got = s.stopped ? 0 : s.ring.read(upTo: wanted) { channel, offset, samples in
                // The frame was made writable above, so this cannot fail.
                _ = try? frame.withMutableChannel(channel) { out in
                    for i in 0..<samples.count { out[offset + i] += samples[i] * gain }
                }
            }
            if isNetwork && got < wanted && !s.ended { s.ready = false }
            s.consumed += Int64(got)
            while let boundary = s.passBoundaries.first, s.consumed >= boundary {
                s.passStart = boundary
                s.passesDone += 1
                s.passBoundaries.removeFirst()
            }
            let outcome = Outcome(samples: got, position: s.consumed - s.passStart, pass: s.passesDone,
                                  finished: s.ended && !s.failed && s.ring.isEmpty)
            return (outcome, !s.ended && !s.stopped && s.ring.space >= Self.refillRoom)
        }
        if refill { decode() }
        return outcome
    }

    // MARK: - Decode jobs

    private func decode() {
        drain.offer { self.turn() }
    }

    /// One job's turn: opens the source the first time, then decodes into the ring until it is
    /// full (what does not fit waits in `leftover`), the source ends, or the player stopped.
    private func turn() -> DrainSchedule.Turn {
        decoding.withLock { job in
            if interrupt.isCancelled {
                job.decoder = nil  // closed here, on the pool, not on the mixer's thread
                return
            }
            if !job.openingDone {
                job.openingDone = true
                do throws(LivePushError) {
                    job.decoder = try AudioFileDecoder(source: source, timeout: timeout, interrupt: interrupt)
                } catch {
                    end(failure: error)
                    return
                }
                guard !interrupt.isCancelled, let decoder = job.decoder else { return }
                onNotice(.opened(duration: decoder.duration))
                // After the notice, so a mixer that waited for the opening finds the music opened.
                state.withLock { $0.openingOver = true }
                progress.wake()
            }
            guard let decoder = job.decoder else { return }  // ended
            do throws(LivePushError) {
                while let (format, generation) = state.withLock({ s in s.stopped ? nil : s.format.map { ($0, s.generation) } }) {
                    // Decoded for a format the push no longer has: dropped, as the ring was.
                    if let leftover = job.leftover, leftover.generation != generation { job.leftover = nil }
                    if let leftover = job.leftover {
                        let left = leftover.remaining
                        let taken = write(leftover, generation: generation)
                        guard taken == left else {
                            job.leftover?.offset += taken
                            return  // the ring is full: the mixer asks again when it has room
                        }
                        job.leftover = nil
                        if job.endsAfterLeftover {
                            end(failure: nil)
                            job.decoder = nil
                            return
                        }
                    }
                    if state.withLock({ $0.ring.space == 0 }) { return }
                    let more = try decoder.decodeNext(format: format) { planes in
                        let count = planes.first?.count ?? 0
                        job.passSamples += Int64(count)
                        // Behind what is already left over (a packet can decode to several frames).
                        if job.leftover != nil {
                            job.leftover!.append(planes)
                            return
                        }
                        let taken = write(planes, generation: generation)
                        if taken < count { job.leftover = Leftover(planes, from: taken, generation: generation) }
                    }
                    if more { continue }
                    if interrupt.isCancelled { return }
                    // A pass that produced nothing would loop forever.
                    if loop && job.passSamples > 0 && decoder.rewind() {
                        job.passSamples = 0
                        let pending = Int64(job.leftover?.remaining ?? 0)
                        state.withLock { $0.passBoundaries.append($0.written + pending) }
                        continue
                    }
                    if job.leftover != nil {
                        job.endsAfterLeftover = true
                        return
                    }
                    end(failure: nil)
                    job.decoder = nil
                    return
                }
            } catch {
                end(failure: error)
                job.decoder = nil
            }
        }
        return .drained
    }

    /// Copies decoded samples into the ring (what fits), unless the format changed since they
    /// were decoded; returns how many it took.
    private func write(_ planes: [UnsafeBufferPointer<Float>], from offset: Int = 0, generation: Int) -> Int {
        let taken = state.withLock { s -> Int in
            guard s.generation == generation, !s.stopped else { return 0 }
            let n = s.ring.write(planes, from: offset)
            s.written += Int64(n)
            return n
        }
        if taken > 0 { progress.wake() }
        return taken
    }

    private func write(_ leftover: Leftover, generation: Int) -> Int {
        leftover.samples.withUnsafeBufferPointer { all in
            let length = all.count / leftover.channels
            let planes = (0..<leftover.channels).map { UnsafeBufferPointer(rebasing: all[($0 * length)..<(($0 + 1) * length)]) }
            return write(planes, from: leftover.offset, generation: generation)
        }
    }

    private func end(failure: LivePushError?) {
        let report = state.withLock { s -> Bool in
            s.ended = true
            s.failed = failure != nil
            return !s.stopped
        }
        progress.wake()
        if let failure, report { onNotice(.failed(failure)) }
    }
}
