import Synchronization

/// The live controls a ``LivePusher`` shares with the media pipeline of its pushes: the
/// filter chain, the detector, the mixer and adaptive bitrate's state. They outlive a
/// single push (filters added before `start` apply to it), and every member is safe to use
/// from the app's threads while the pipeline thread reads it.
final class PipelineHooks: Sendable {
    let filters = FilterChain()
    /// BGM, sound effects and volumes, mixed into the audio of every push (see ``AudioMixer``).
    let audio = AudioMixer()
    private let detectorTap = Mutex<DetectorTap?>(nil)
    /// Adaptive bitrate (nil until an encoding push starts). Its decisions reach the encoder as
    /// ``SessionCommand/setBitrate(_:)``.
    private let bitrate = Mutex<AdaptiveBitrate?>(nil)
    private let measured = Mutex(PipelineStats())
    /// Where the pipeline and the mixer report (filter lifecycle, low performance, BGM).
    private let sink = Mutex<(@Sendable (PushEvent) -> Void)?>(nil)

    init() {}

    deinit {
        // The detector's thread waits for frames; it ends with its pusher.
        detectorTap.withLock { $0 }?.stop()
    }

    func setReporter(_ report: @escaping @Sendable (PushEvent) -> Void) {
        sink.withLock { $0 = report }
        audio.setReporter(report)
    }

    func report(_ event: PushEvent) {
        sink.withLock { $0 }?(event)
    }

    // MARK: Detector

    var detector: DetectorTap? { detectorTap.withLock { $0 } }

    func setDetector(_ detector: (any FrameDetector)?) {
        let old = detectorTap.withLock { tap -> DetectorTap? in
            let old = tap
            tap = detector.map { DetectorTap(detector: $0) }
            return old
        }
        old?.stop()
    }

    // MARK: Bitrate

    /// The video encoder of a push opened; with `adaptive`, network changes now move its
    /// bitrate. Returns the token to end it with.
    func encoderStarted(_ settings: VideoEncoderSettings, adaptive: Bool) -> Int {
        bitrate.withLock {
            $0 = adaptive ? AdaptiveBitrate(target: settings.targetBitrate, minimum: settings.minBitrate,
                                            initial: settings.initialBitrate) : nil
        }
        update { $0.encoderBitrate = settings.initialBitrate }
        return encoder.withLock { token in
            token = abs(token) + 1
            return token
        }
    }

    /// That push's encoder closed. A token that is not the newest belongs to a push that ended
    /// after the next one started (its pipeline is released late): it must not stop that one.
    func encoderStopped(_ token: Int) {
        let current = encoder.withLock { latest in
            guard latest == token else { return false }
            latest = -latest  // negative: no encoder open
            return true
        }
        if current { bitrate.withLock { $0 = nil } }
    }

    /// The newest encoder's token; negative once it stopped.
    private let encoder = Mutex(0)
    /// Whether the current push decodes and encodes its video (so filters can apply).
    var isEncodingVideo: Bool { encoder.withLock { $0 > 0 } }

    enum NetworkCondition { case poor, recovered, unchanged }

    /// Feeds a network change (or, with `.unchanged`, the passing of time) to adaptive
    /// bitrate; returns the change (bit/s) to send to the encoder and report, if any.
    func adaptBitrate(_ condition: NetworkCondition, now: Int64) -> (from: Int, to: Int)? {
        bitrate.withLock { state -> (from: Int, to: Int)? in
            guard var control = state else { return nil }
            let from = control.current
            let next: Int?
            switch condition {
            case .poor: next = control.networkPoor(now: now)
            case .recovered: next = control.networkRecovered(now: now)
            case .unchanged: next = control.tick(now: now)
            }
            state = control
            guard let next else { return nil }
            return (from, next)
        }.map { change in
            // Counted when decided, like the event; the encoder applies it at its next frame.
            update {
                $0.encoderBitrate = change.to
                $0.bitrateChanges += 1
            }
            return change
        }
    }

    // MARK: Measurements

    var stats: PipelineStats { measured.withLock { $0 } }

    func update(_ body: (inout PipelineStats) -> Void) {
        measured.withLock { body(&$0) }
    }

    func resetStats() {
        measured.withLock { $0 = PipelineStats() }
    }
}
