/// The raw-frame stages of one push: its filter chain, its detector tap and the adaptive
/// bitrate of the video encoder on air, with the mixer its audio goes through.
///
/// Owned by the push's producer: only the producer's steps run and change them, and the app's
/// changes reach them as ``EngineCommand``s taken between two packets, so nothing here is
/// locked. The inputs' processors (decode → detector → filters → encode) hold it, and run on
/// the producer too; an input opened ahead on another thread only keeps the reference. What the
/// stages measure goes up through ``StageFigures`` (read from any thread) and events.
final class FrameStages {
    /// Background music and effects (``AudioMixer``): it outlives the push, with its own lock,
    /// since its players decode on threads of their own.
    let mixer: AudioMixer
    let figures = StageFigures()
    private let report: @Sendable (PushEvent) -> Void
    private(set) var filters: FilterChain
    private var detector: DetectorTap?
    /// Adaptive bitrate of the encoder on air (nil until one starts, or when it does not adapt).
    private var bitrate: AdaptiveBitrate?
    /// When time last moved it: it keeps stepping about once a second while a condition lasts.
    private var lastTick: Int64?

    init(settings: StageSettings, mixer: AudioMixer, report: @escaping @Sendable (PushEvent) -> Void,
         dropped: @escaping @Sendable (ObjectIdentifier) -> Void = { _ in }) {
        self.mixer = mixer
        self.report = report
        filters = FilterChain(report: report, dropped: dropped)
        filters.set(settings.filters)
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
        filters.shutDown()
        detector?.stop()
        detector = nil
    }

    // MARK: - Commands

    func setFilters(_ wanted: [any VideoFilter]) {
        filters.set(wanted)
    }

    /// A new detector gets a tap (a thread) of its own; the same one again changes nothing.
    func setDetector(_ wanted: (any FrameDetector)?) {
        if let wanted, let detector, detector.identity == ObjectIdentifier(wanted) { return }
        detector?.stop()
        detector = wanted.map { DetectorTap(detector: $0, figures: figures) }
    }

    // MARK: - Frames

    /// Offers a decoded frame to the detector, then runs the filters over it.
    func process(_ frame: inout VideoFrame, frameRate: Double) {
        detector?.offer(frame)
        filters.run(&frame, frameRate: frameRate)
    }

    // MARK: - Adaptive bitrate

    /// The video encoder now on air took its first frame: with `adaptive`, network changes
    /// move its bitrate from here on.
    func videoEncoderStarted(_ settings: VideoEncoderSettings, adaptive: Bool) {
        bitrate = adaptive ? AdaptiveBitrate(target: settings.targetBitrate, minimum: settings.minBitrate,
                                             initial: settings.initialBitrate) : nil
        figures.update { $0.encoderBitrate = settings.initialBitrate }
    }

    /// Feeds the push's network change (nil: the passing of time) to adaptive bitrate; returns
    /// the bitrate (bit/s) the encoder on air switches to, if it changes. Reported and counted
    /// when decided, like the change itself.
    func adaptBitrate(isPoor: Bool?, now: Int64) -> Int? {
        guard var control = bitrate else { return nil }
        if isPoor == nil {
            if let lastTick, now - lastTick < 1_000_000 { return nil }
            lastTick = now
        }
        let from = control.current
        let next: Int? = switch isPoor {
        case true?: control.networkPoor(now: now)
        case false?: control.networkRecovered(now: now)
        case nil: control.tick(now: now)
        }
        bitrate = control
        guard let next else { return nil }
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
