/// Raw-frame processing: filters, the detector, the pause image.
///
/// Filters and detectors need decoded frames, so a push that has any when it starts (or a
/// pause image, or ``MediaSourceOptions/encodeVideo``) decodes and re-encodes its video even
/// when it could be stream-copied. Filters can then be added and removed while it runs.
extension LivePusher {
    /// Appends a filter to the chain; it is created before the next frame. On a push that
    /// stream-copies its video this throws `invalidState`: start with a filter, or set
    /// `config.media.encodeVideo`.
    public func addFilter(_ filter: any VideoFilter) throws(LivePushError) {
        if isPushing, let running = runningPush, !running.stageFigures.encodesVideo {
            throw LivePushError(.invalidState, "this push copies its video; filters need config.media.encodeVideo = true")
        }
        changeStages { settings in
            if !settings.filters.contains(where: { $0 === filter }) { settings.filters.append(filter) }
        }
    }

    /// Removes a filter; it is destroyed after the frame it may be processing.
    public func removeFilter(_ filter: any VideoFilter) {
        changeStages { $0.filters.removeAll { $0 === filter } }
    }

    /// Removes every filter.
    public func removeAllFilters() {
        changeStages { $0.filters.removeAll() }
    }

    /// The filters in the order they run.
    public var filters: [any VideoFilter] { stageSettings.withLock { $0.filters } }

    /// Sets (or, with nil, removes) the detector that receives read-only frames beside the filters.
    public func setDetector(_ detector: (any FrameDetector)?) {
        changeStages { $0.detector = detector }
    }

    /// Changes what the app set up and sends the result to the running push, in one lock: the
    /// push applies the changes in the order they were made.
    private func changeStages(_ change: (inout StageSettings) -> Void) {
        stageSettings.withLock { settings in
            let before = settings
            change(&settings)
            guard let running = runningPush else { return }
            if settings.filters.map(ObjectIdentifier.init) != before.filters.map(ObjectIdentifier.init) {
                running.send(.setFilters(settings.filters))
            }
            if settings.detector.map(ObjectIdentifier.init) != before.detector.map(ObjectIdentifier.init) {
                running.send(.setDetector(settings.detector))
            }
        }
    }

    /// How the next push opens its file: the app's options, plus encoding when filters, a
    /// detector or a pause image need decoded frames.
    var mediaOptions: MediaSourceOptions {
        var options = config.media
        if stageSettings.withLock({ $0.needsFrames }) { options.encodeVideo = true }
        options.pauseImage = config.pauseImage
        return options
    }

    /// What `pause()` switches to: the pause image at ``PushConfig/pauseImageFrameRate``, at the
    /// push's size, with silence (and the BGM) at its audio format. Nil (pause sends nothing)
    /// without an image or when the push copies its video: a copied stream could only come
    /// back at its next keyframe.
    func makeSlate(for info: StreamInfo, encodesVideo: Bool) throws(LivePushError) -> StillInput? {
        guard let path = config.pauseImage, let video = info.video, encodesVideo else { return nil }
        return try StillInput(image: path, video: .init(width: video.width, height: video.height,
                                                        frameRate: config.pauseImageFrameRate),
                              audio: info.audio.map { .init(sampleRate: $0.sampleRate, channels: $0.channels) },
                              duration: nil, options: mediaOptions, blackWithoutImage: false)
    }

    var isPushing: Bool {
        switch state {
        case .connecting, .pushing, .paused, .reconnecting: true
        default: false
        }
    }
}
