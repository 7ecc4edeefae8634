import FoundationEssentials
import Dispatch
import Synchronization

/// What fills a break, in order: the resolved ads, then the fallback until the break ends.
enum BreakFill: Sendable, Equatable {
    case ad(PlayoutSchedule.Clip)
    /// Loops until the break ends.
    case alternate
    /// Black with silence until the break ends.
    case slate
    /// The main content comes back (the break ends early, on its next keyframe).
    case main

    var name: String {
        switch self {
        case .ad(let clip): "ad \(clip.id)"
        case .alternate: "alternate"
        case .slate: "slate"
        case .main: "main"
        }
    }
}

/// A break to play now: its window on the main input's timeline and what fills it.
struct BreakPlan: Sendable, Equatable {
    var window: BreakSchedule.Window
    var fills: [BreakFill]
}

/// The control side of a push's breaks: reads the main input's cues through the opportunity
/// resolvers into a ``BreakSchedule``, asks the content resolvers (each on its own task, under
/// the deadline), and tells the producer which break to play and with what. The producer
/// thread calls everything but the resolvers' completions and the up-front resolution
/// (``resolveUpFront(whenSettled:)``), which touch only `resolutions`.
final class BreakDirector: @unchecked Sendable {
    let options: BreakOptions
    private let opportunityResolvers: [any OpportunityResolver]
    private let contentResolvers: [any ContentResolver]
    private let emit: @Sendable (BreakEvent) -> Void
    /// An input read once, whole, before the push (a file): its cues, resolved up front. The
    /// scan goes on while its argument says so.
    private let upFrontCues: (@Sendable (_ keepGoing: @Sendable () -> Bool) -> [SourceCue])?
    /// Producer thread only.
    private var schedule = BreakSchedule()
    /// Blackouts known in advance (output time µs, length µs), not yet opened.
    private var windows: [(start: Int64, duration: Int64)] = []
    /// Ids of the opportunities commands and windows open (cues carry their own).
    private var nextOwnID: UInt32 = 0x4C50_0001
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

    init(options: BreakOptions, resolvers: ResolverRegistry,
         upFrontCues: (@Sendable (_ keepGoing: @Sendable () -> Bool) -> [SourceCue])?,
         emit: @escaping @Sendable (BreakEvent) -> Void) {
        self.options = options
        (opportunityResolvers, contentResolvers) = resolvers.snapshot(subscription: options.subscription)
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

    /// Before the first packet, whose output time 0 is the wall time `origin` (µs since 1970,
    /// read from the push's ``WallClock`` by its driver): the blackout windows known in advance
    /// are placed on the output timeline (the breaks themselves open as the cues are read).
    func prepare(wallClockOrigin origin: Int64) {
        windows = options.blackouts.map { ($0.outputStart(origin: origin), $0.duration.nanoseconds / 1000) }.sorted { $0.start < $1.start }
    }

    /// A cue packet read from the main input, whose time maps to output time by `+ offset`.
    /// Returns the cue to pass on (sent at output time `now`), if it is one and cues are passed on.
    func receive(_ packet: MediaPacket, mapping: InputTimeMapping, now: Int64) -> AdCue? {
        let cue: SourceCue
        do {
            cue = try SourceCue(bytes: packet.data, arrival: packet.pts)
        } catch {
            emit(.cueRejected(error))
            return nil
        }
        emit(.cueReceived(cue))
        apply(cue, mapping: mapping)
        guard options.passSourceCues, cue.eventID != nil else { return nil }
        return cue.passedOn(mapping, sendAt: now)
    }

    private func apply(_ cue: SourceCue, mapping: InputTimeMapping) {
        for resolver in opportunityResolvers {
            for signal in resolver.signals(for: cue) {
                switch schedule.apply(signal, mapping: mapping) {
                case .opened(let opportunity):
                    emit(.opportunityDetected(opportunity))
                    resolve(opportunity)
                case .cancelled(let opportunity):
                    settle(opportunity, .unresolved)
                case .none:
                    break
                }
            }
        }
    }

    // MARK: Breaks

    /// The main input's next picture goes out at output time `time`: the break to play before
    /// it, if one starts by then. An ad break that nothing fills (fallback: the main content)
    /// is passed over.
    func breakDue(by time: Int64) -> BreakPlan? {
        while let window = windows.first, window.start <= time {
            windows.removeFirst()
            // A window the push started inside of plays for what is left of it.
            let (start, end) = (max(time, window.start), window.start + window.duration)
            if end > start { openBlackout(at: start, duration: end - start) }
        }
        while let window = schedule.start(dueBy: time) {
            let fills = fills(for: window.opportunity)
            if fills != [.main] {
                let plan = BreakPlan(window: window, fills: fills)
                emit(window.opportunity.kind == .blackout ? .blackoutStarted(window.opportunity)
                     : .breakStarted(window.opportunity, fill: fills.map(\.name).joined(separator: ", ")))
                return plan
            }
            _ = schedule.finishActive()
        }
        return nil
    }

    /// A blackout from output time `start` (a command, a window), for `duration` µs or until ended.
    func openBlackout(at start: Int64, duration: Int64?) {
        let opportunity = PlacementOpportunity(id: nextOwnID, kind: .blackout, start: start, duration: duration)
        nextOwnID &+= 1
        if case .opened = schedule.apply(.opens(opportunity)) { emit(.opportunityDetected(opportunity)) }
    }

    /// The break on air started at output time `time` (see ``BreakSchedule/activeStarted(at:)``).
    func activeStarted(at time: Int64) {
        schedule.activeStarted(at: time)
    }

    /// Where the next break would start, output time (nil: none is known).
    var nextStart: Int64? {
        [schedule.upcoming.first?.start, windows.first?.start].compactMap { $0 }.min()
    }

    /// The opportunity on air.
    var active: PlacementOpportunity? { schedule.active?.opportunity }

    /// Where the break on air ends, output time (nil: not known yet).
    var activeEnd: Int64? { schedule.active?.end }

    /// The break on air ends at `time` at the latest (its fill ran out and the main content
    /// comes back; an end command).
    func closeActive(at time: Int64) {
        schedule.closeActive(at: time)
    }

    func finishActive() {
        guard let window = schedule.finishActive() else { return }
        emit(window.opportunity.kind == .blackout ? .blackoutEnded(window.opportunity) : .breakEnded(window.opportunity))
    }

    private func fills(for opportunity: PlacementOpportunity) -> [BreakFill] {
        let alternate: [BreakFill] = options.alternate != nil ? [.alternate] : [.slate]
        if opportunity.kind == .blackout { return alternate }
        let ads = resolvedAds(for: opportunity).map(BreakFill.ad)
        switch options.adBreakFallback {
        case .alternate: return ads + alternate
        case .slate: return ads + [.slate]
        case .main: return ads + [.main]
        }
    }

    // MARK: Content resolution

    private func resolve(_ opportunity: PlacementOpportunity) {
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
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(options.resolverTimeout.nanoseconds))) { [weak self] in
            self?.settle(opportunity, .unresolved, timedOut: true)
        }
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
    private func resolvedAds(for opportunity: PlacementOpportunity) -> [PlayoutSchedule.Clip] {
        settle(opportunity, .unresolved, timedOut: true)
        guard case .resolved(let breaks) = resolutions.withLock({ $0.byID[opportunity.id] }) else { return [] }
        return breaks.flatMap(\.ads)
    }
}

/// The task a content resolver runs on, once started (a cancel may come first).
private final class ResolverTask: Sendable {
    let running = Mutex<Task<Void, Never>?>(nil)
}
