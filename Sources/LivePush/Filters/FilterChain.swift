import Synchronization

/// The app's video filters, in order. Filters can be added and removed at any time; the
/// pipeline thread picks up the change at the next frame, and is the only one that calls a
/// filter's `create`, `process` and `destroy`.
final class FilterChain: Sendable {
    /// What the app asked for; the pipeline compares it with what it has created.
    private let requested = Mutex<[any VideoFilter]>([])

    var filters: [any VideoFilter] { requested.withLock { $0 } }
    var isEmpty: Bool { requested.withLock { $0.isEmpty } }

    func add(_ filter: any VideoFilter) {
        requested.withLock { list in
            if !list.contains(where: { $0 === filter }) { list.append(filter) }
        }
    }

    func remove(_ filter: any VideoFilter) {
        requested.withLock { $0.removeAll { $0 === filter } }
    }

    func removeAll() {
        requested.withLock { $0.removeAll() }
    }

    /// The pipeline's side: runs the current filters over frames on one thread.
    struct Runner {
        let chain: FilterChain
        let report: @Sendable (PushEvent) -> Void
        private var active: [any VideoFilter] = []
        private var format: VideoFormat?

        init(chain: FilterChain, report: @escaping @Sendable (PushEvent) -> Void) {
            self.chain = chain
            self.report = report
        }

        /// Runs every filter over `frame` in order. A filter that throws is destroyed,
        /// removed and reported; the frame goes on as the filters before it left it.
        mutating func run(_ frame: inout VideoFrame, frameRate: Double) {
            let current = VideoFormat(width: frame.width, height: frame.height, pixelFormat: frame.pixelFormat,
                                      frameRate: frameRate)
            sync(to: chain.filters, format: current)
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
                    fail(filter, error)
                }
            }
        }

        /// Destroys every created filter (end of the push).
        mutating func shutDown() {
            for filter in active { destroy(filter) }
            active.removeAll()
            format = nil
        }

        /// Creates filters that were added, destroys those that were removed, and re-creates
        /// all when the picture format changed.
        private mutating func sync(to wanted: [any VideoFilter], format current: VideoFormat) {
            if format != current {
                for filter in active { destroy(filter) }
                active.removeAll()
                format = current
            }
            for filter in active where !wanted.contains(where: { $0 === filter }) { destroy(filter) }
            var next: [any VideoFilter] = []
            for filter in wanted {
                if active.contains(where: { $0 === filter }) {
                    next.append(filter)
                    continue
                }
                do {
                    try filter.create(format: current)
                    report(.filterCreated(name: filter.name))
                    next.append(filter)
                } catch {
                    chain.remove(filter)  // failed: it is not created again
                    report(.filterFailed(name: filter.name, Self.describe(error, in: filter, during: "create")))
                }
            }
            active = next
        }

        private mutating func fail(_ filter: any VideoFilter, _ error: any Error) {
            active.removeAll { $0 === filter }
            chain.remove(filter)
            report(.filterFailed(name: filter.name, Self.describe(error, in: filter, during: "process")))
            destroy(filter)
        }

        private func destroy(_ filter: any VideoFilter) {
            filter.destroy()
            report(.filterDestroyed(name: filter.name))
        }

        private static func describe(_ error: any Error, in filter: any VideoFilter, during step: String) -> LivePushError {
            LivePushError(.filterFailed, "\(filter.name) \(step): \(error)")
        }
    }
}
