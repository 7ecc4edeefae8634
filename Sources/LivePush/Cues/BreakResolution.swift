import Dispatch
import Synchronization

/// The content resolvers' side of a push's breaks: every opportunity's resolution, asked on a
/// task of its own under the deadline, and the file's cues read up front. Any thread: the
/// producer's ``BreakDirector`` asks it and reads its answers, the scan runs on a worker kept
/// for reading ahead, the answers and the timeouts come from the resolvers' tasks, and a stop
/// abandons the scan.
final class BreakResolution: Sendable {
    let timeout: Duration
    private let opportunityResolvers: [any OpportunityResolver]
    private let contentResolvers: [any ContentResolver]
    private let emit: @Sendable (BreakEvent) -> Void
    /// An input read once, whole, before the push (a file): its cues, resolved up front. The
    /// scan goes on while its argument says so.
    private let upFrontCues: (@Sendable (_ keepGoing: @Sendable () -> Bool) -> [SourceCue])?
    private let resolutions: Mutex<Resolutions>

    private enum Resolution {
        case pending(cancel: @Sendable () -> Void)
        case resolved([AdBreak])
        case unresolved
    }

    /// Every opportunity's resolution, and where the up-front ones stand.
    private struct Resolutions {
        var byID: [UInt32: Resolution] = [:]
        /// The file's cues were scanned and every opportunity they open has settled (or there
        /// is nothing to resolve up front): the producer may start.
        var upFrontSettled: Bool
        var scanned = false
        /// Told once, when the up-front resolutions have settled.
        var whenSettled: (@Sendable () -> Void)?
        /// The push stopped: a scan still running gives up.
        var abandoned = false

        var hasPending: Bool {
            byID.values.contains { if case .pending = $0 { true } else { false } }
        }
    }

    init(opportunityResolvers: [any OpportunityResolver], contentResolvers: [any ContentResolver], timeout: Duration,
         upFrontCues: (@Sendable (_ keepGoing: @Sendable () -> Bool) -> [SourceCue])?,
         emit: @escaping @Sendable (BreakEvent) -> Void) {
        self.opportunityResolvers = opportunityResolvers
        self.contentResolvers = contentResolvers
        self.timeout = timeout
        self.upFrontCues = upFrontCues
        self.emit = emit
        resolutions = Mutex(Resolutions(upFrontSettled: upFrontCues == nil || contentResolvers.isEmpty))
    }

    /// When the push starts: a file's cues are read in one pass and every opportunity they open
    /// goes to the content resolvers, on a worker kept for reading ahead
    /// (``ConnectionWorkers/scanning``), never on the thread that called. `whenSettled` is
    /// called once every answer is in (each by its deadline at the latest, a timeout settles
    /// it); the producer starts only then (``upFrontSettled``), so that a file's first break
    /// gets its ads however soon it comes. Nothing to resolve: settled already, never called.
    func resolveUpFront(whenSettled: @escaping @Sendable () -> Void) {
        guard let upFrontCues, !contentResolvers.isEmpty else { return }
        resolutions.withLock { $0.whenSettled = whenSettled }
        let keepsScanning: @Sendable () -> Bool = { [weak self] in self?.resolutions.withLock { !$0.abandoned } ?? false }
        ConnectionWorkers.scanning.run { [self] in
            for cue in upFrontCues(keepsScanning) {
                for resolver in opportunityResolvers {
                    for case .opens(let opportunity) in resolver.signals(for: cue) { resolve(opportunity) }
                }
            }
            resolutions.withLock { $0.scanned = true }
            tellIfSettled()
        }
    }

    /// Whether the up-front resolutions have all settled (see ``resolveUpFront(whenSettled:)``).
    var upFrontSettled: Bool { resolutions.withLock { $0.upFrontSettled } }

    /// The push stopped: a scan still running ends at its next packet.
    func abandon() {
        resolutions.withLock { $0.abandoned = true }
    }

    /// Asks the first content resolver that handles `opportunity` (an ad break), once.
    func resolve(_ opportunity: PlacementOpportunity) {
        guard opportunity.kind == .adBreak,
              let resolver = contentResolvers.first(where: { $0.shouldHandle(opportunity) }) else { return }
        let known = resolutions.withLock { $0.byID[opportunity.id] != nil }
        guard !known else { return }
        // Pending before the task starts: an answer that comes at once must find it so.
        let task = ResolverTask()
        resolutions.withLock {
            $0.byID[opportunity.id] = .pending(cancel: {
                task.running.withLock { $0?.cancel() }
                resolver.cancel(opportunity)
            })
        }
        let running = Task { [weak self] in
            do {
                let breaks = try await resolver.process(opportunity)
                self?.settle(opportunity, .resolved(breaks))
            } catch {
                self?.settle(opportunity, .unresolved, failure: LivePushError(.opportunityUnresolved, "opportunity \(opportunity.id): \(error)"))
            }
        }
        task.running.withLock { $0 = running }
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(timeout.nanoseconds))) { [weak self] in
            self?.settle(opportunity, .unresolved, timedOut: true)
        }
    }

    /// An opportunity was cancelled before its break: its resolution no longer counts.
    func cancel(_ opportunity: PlacementOpportunity) {
        settle(opportunity, .unresolved)
    }

    /// The first answer counts: a resolution settles once. A timeout cancels the resolver.
    private func settle(_ opportunity: PlacementOpportunity, _ outcome: Resolution, timedOut: Bool = false,
                        failure: LivePushError? = nil) {
        let pending = resolutions.withLock { table -> (@Sendable () -> Void)? in
            guard case .pending(let cancel) = table.byID[opportunity.id] else { return nil }
            table.byID[opportunity.id] = outcome
            return cancel
        }
        guard let cancelResolver = pending else { return }
        if timedOut {
            cancelResolver()
            emit(.opportunityTimedOut(opportunity))
        } else if let failure {
            emit(.opportunityFailed(opportunity, failure))
        } else if case .resolved(let breaks) = outcome {
            emit(.opportunityResolved(opportunity, ads: breaks.reduce(0) { $0 + $1.ads.count }))
        }
        tellIfSettled()
    }

    /// Once the scan is done and no answer is pending: the up-front resolutions have settled.
    private func tellIfSettled() {
        let whenSettled = resolutions.withLock { table -> (@Sendable () -> Void)? in
            guard table.scanned, !table.upFrontSettled, !table.hasPending else { return nil }
            table.upFrontSettled = true
            defer { table.whenSettled = nil }
            return table.whenSettled
        }
        whenSettled?()
    }

    /// The ads resolved for a break at its splice; a resolution still pending is out of time.
    func resolvedAds(for opportunity: PlacementOpportunity) -> [PlayoutSchedule.Clip] {
        settle(opportunity, .unresolved, timedOut: true)
        guard case .resolved(let breaks) = resolutions.withLock({ $0.byID[opportunity.id] }) else { return [] }
        return breaks.flatMap(\.ads)
    }
}

/// The task a content resolver runs on, once started (a cancel may come first).
private final class ResolverTask: Sendable {
    let running = Mutex<Task<Void, Never>?>(nil)
}
