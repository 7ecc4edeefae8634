/// What the app set up for the raw-frame stages: it outlives a push (filters added before
/// `start` apply to it) and seeds each new push's ``FrameStages``.
struct StageSettings: Sendable {
    var filters: [any VideoFilter] = []
    var detector: (any FrameDetector)?

    /// Whether the video must be decoded for them (filters and detectors need frames).
    var needsFrames: Bool { !filters.isEmpty || detector != nil }
}
