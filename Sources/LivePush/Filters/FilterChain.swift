/// The video filters of one push, in order, owned by its producer: the only place that calls a
/// filter's `create`, `process` and `destroy`. The app's changes arrive as a whole new list
/// (``EngineCommand/setFilters(_:)``) between two frames; the chain creates the filters that
/// are new, destroys those that went, and re-creates them all when the picture format changes.
struct FilterChain {
    /// Filter lifecycle events (created, destroyed, failed).
    let report: @Sendable (PushEvent) -> Void
    /// A filter that failed left the chain: its owner forgets it too.
    let dropped: @Sendable (ObjectIdentifier) -> Void
    /// What the app asked for, in order.
    private(set) var filters: [any VideoFilter] = []
    /// Created for the current format.
    private var active: [any VideoFilter] = []
    private var format: VideoFormat?
    /// Filters that failed: never created again, even if a list sent before the failure was
    /// known still names them.
    private var failed: Set<ObjectIdentifier> = []

    init(report: @escaping @Sendable (PushEvent) -> Void, dropped: @escaping @Sendable (ObjectIdentifier) -> Void = { _ in }) {
        self.report = report
        self.dropped = dropped
    }

    var isEmpty: Bool { filters.isEmpty }

    /// The filters the app wants from the next frame on (each once, in order).
    mutating func set(_ wanted: [any VideoFilter]) {
        var list: [any VideoFilter] = []
        for filter in wanted where !failed.contains(ObjectIdentifier(filter)) && !list.contains(where: { $0 === filter }) {
            list.append(filter)
        }
        filters = list
    }

    /// Runs every filter over `frame` in order. A filter that throws is destroyed, removed and
    /// reported; the frame goes on as the filters before it left it.
    mutating func run(_ frame: inout VideoFrame, frameRate: Double) {
        let current = VideoFormat(width: frame.width, height: frame.height, pixelFormat: frame.pixelFormat, frameRate: frameRate)
        sync(format: current)
        var index = 0
        while index < active.count {
            let filter = active[index]
            var candidate = frame
            do {
                if try filter.process(&candidate) {
                    candidate.timestamp = frame.timestamp
                    frame = candidate
                }
                index += 1
            } catch {
                fail(filter, error, during: "process")
            }
        }
    }

    /// Destroys every created filter (the end of the push, or of its encoded video).
    mutating func shutDown() {
        for filter in active { destroy(filter) }
        active.removeAll()
        format = nil
    }

    /// Creates filters that were added, destroys those that were removed, and re-creates all
    /// when the picture format changed.
    private mutating func sync(format current: VideoFormat) {
        if format != current {
            shutDown()
            format = current
        }
        for filter in active where !filters.contains(where: { $0 === filter }) { destroy(filter) }
        var next: [any VideoFilter] = []
        for filter in filters {
            if active.contains(where: { $0 === filter }) {
                next.append(filter)
                continue
            }
            do {
                try filter.create(format: current)
                report(.filterCreated(name: filter.name))
                next.append(filter)
            } catch {
                forget(filter)
                report(.filterFailed(name: filter.name, Self.describe(error, in: filter, during: "create")))
            }
        }
        active = next
    }

    private mutating func fail(_ filter: any VideoFilter, _ error: any Error, during step: String) {
        active.removeAll { $0 === filter }
        forget(filter)
        report(.filterFailed(name: filter.name, Self.describe(error, in: filter, during: step)))
        destroy(filter)
    }

    private mutating func forget(_ filter: any VideoFilter) {
        filters.removeAll { $0 === filter }
        failed.insert(ObjectIdentifier(filter))
        dropped(ObjectIdentifier(filter))
    }

    private func destroy(_ filter: any VideoFilter) {
        filter.destroy()
        report(.filterDestroyed(name: filter.name))
    }

    private static func describe(_ error: any Error, in filter: any VideoFilter, during step: String) -> LivePushError {
        LivePushError(.filterFailed, "\(filter.name) \(step): \(error)")
    }
}
