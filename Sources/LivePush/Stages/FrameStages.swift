import Synchronization

/// The raw-frame stages of one push: its filter chain, its detector tap and the adaptive
/// bitrate of the video encoder on air, with the mixer its audio goes through.
///
/// Run by the push's producer: only the producer's steps run and change them, and the app's
/// changes reach them as ``EngineCommand``s taken between two packets. The engine and the
/// inputs' processors (decode → detector → filters → encode) both hold it, and an input opened
/// ahead on another thread keeps the reference: the state is in a `Mutex` so that the compiler
/// checks that sharing (the producer is its one user, so the lock is never contended: an atomic
/// exchange per picture, no syscall). What the stages measure goes up through ``StageFigures``
/// (read from any thread) and events.
final class FrameStages: Sendable {
    /// Background music and effects (``AudioMixer``): it outlives the push, with its own lock,
    /// since its players decode on threads of their own.
    let mixer: AudioMixer
    let figures = StageFigures()
    /// The live overlays and the playout entry's, drawn after the filters (its own lock: the
    /// app's and the control API's changes come from their threads). The pusher's: the live
    /// overlays stay from one push to the next, like the filters.
    let overlays: OverlayStage
    private let report: @Sendable (PushEvent) -> Void

    private struct State {
        var filters: FilterChain
        var detector: DetectorTap?
        /// Adaptive bitrate of the encoder on air (nil until one starts, or when it does not adapt).
        var bitrate: AdaptiveBitrate?
        /// When time last moved it: it keeps stepping about once a second while a condition lasts.
        var lastTick: Int64?
    }
    private let state: Mutex<State>

    /// The filters the app asked for, in order.
    var filters: FilterChain { state.withLock { $0.filters } }
    /// Whether any filter runs over the pictures.
    var hasFilters: Bool { state.withLock { !$0.filters.isEmpty } }

    init(settings: StageSettings, mixer: AudioMixer, overlays: OverlayStage = OverlayStage(),
         report: @escaping @Sendable (PushEvent) -> Void, dropped: @escaping @Sendable (ObjectIdentifier) -> Void = { _ in }) {
        self.mixer = mixer
        self.overlays = overlays
        self.report = report
        var filters = FilterChain(report: report, dropped: dropped)
        filters.set(settings.filters)
        state = Mutex(State(filters: filters))
        setDetector(settings.detector)
    }

    /// Stages for an input opened on its own (tests, tools): no filters, no detector.
    convenience init() {
        self.init(settings: StageSettings(), mixer: AudioMixer(), report: { _ in })
    }

    deinit {
        shutDown()
    }

    /// The end of the push: filters are destroyed (`filterDestroyed`), the detector stops.
    func shutDown() {
        state.withLock {
            $0.filters.shutDown()
            $0.detector?.stop()
            $0.detector = nil
        }
    }

    // MARK: - Commands

    func setFilters(_ wanted: [any VideoFilter]) {
        state.withLock { $0.filters.set(wanted) }
    }

    /// A new detector gets a tap (a thread) of its own; the same one again changes nothing.
    func setDetector(_ wanted: (any FrameDetector)?) {
        let figures = figures
        state.withLock { state in
            if let wanted, let detector = state.detector, detector.identity == ObjectIdentifier(wanted) { return }
            state.detector?.stop()
            state.detector = wanted.map { DetectorTap(detector: $0, figures: figures) }
        }
    }

    // MARK: - Frames

    /// Offers a decoded frame to the detector, then runs the filters over it.
    func process(_ frame: inout VideoFrame, frameRate: Double) {
        state.withLock { state in
            state.detector?.offer(frame)
            state.filters.run(&frame, frameRate: frameRate)
        }
    }

    // MARK: - Adaptive bitrate

    /// The video encoder now on air took its first frame: with `adaptive`, network changes
    /// move its bitrate from here on.
    func videoEncoderStarted(_ settings: VideoEncoderSettings, adaptive: Bool) {
        let bitrate = adaptive ? AdaptiveBitrate(target: settings.targetBitrate, minimum: settings.minBitrate,
                                                 initial: settings.initialBitrate) : nil
        state.withLock { $0.bitrate = bitrate }
        figures.update { $0.encoderBitrate = settings.initialBitrate }
    }

    /// Feeds the push's network change (nil: the passing of time) to adaptive bitrate; returns
    /// the bitrate (bit/s) the encoder on air switches to, if it changes. Reported and counted
    /// when decided, like the change itself.
    func adaptBitrate(isPoor: Bool?, now: Int64) -> Int? {
        let step = state.withLock { state -> (from: Int, next: Int?)? in
            guard var control = state.bitrate else { return nil }
            if isPoor == nil {
                if let lastTick = state.lastTick, now - lastTick < MediaTime.seconds(1).microseconds { return nil }
                state.lastTick = now
            }
            let from = control.current
            let next: Int? = switch isPoor {
            case true?: control.networkPoor(now: now)
            case false?: control.networkRecovered(now: now)
            case nil: control.tick(now: now)
            }
            state.bitrate = control
            return (from, next)
        }
        guard let step, let next = step.next else { return nil }
        let from = step.from
        figures.update {
            $0.encoderBitrate = next
            $0.bitrateChanges += 1
        }
        report(.videoBitrateChanged(from: from / 1000, to: next / 1000))
        return next
    }

    /// Reports from the stages' processors (low performance).
    func reportEvent(_ event: PushEvent) {
        report(event)
    }
}
