import FoundationEssentials

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

/// The producer's side of a push's breaks: reads the main input's cues through the opportunity
/// resolvers into a ``BreakSchedule`` and tells the producer which break to play and with what.
/// The content resolvers' answers come from its ``resolution`` (any thread); everything else is
/// the producer's alone, so it is not `Sendable`: the push hands it to its producer whole
/// (in its ``BreakSetup``).
final class BreakDirector {
    let options: BreakOptions
    /// The content resolvers' answers, shared with the threads that scan, answer and stop.
    let resolution: BreakResolution
    private let opportunityResolvers: [any OpportunityResolver]
    private let emit: @Sendable (BreakEvent) -> Void
    private var schedule = BreakSchedule()
    /// Blackouts known in advance, not yet opened; placed on the output timeline by the clock
    /// each time they are looked at (a pause moves a wall-clock window).
    private var windows: [BlackoutWindow] = []
    /// The wall clock and the monotonic clock read together when the producer started.
    private var wallReading = WallClockReading(wall: 0, monotonic: .zero)
    /// Ids of the opportunities commands and windows open (cues carry their own).
    private var nextOwnID: UInt32 = 0x4C50_0001
    /// The start of the break that fell due, told once it is on air (``activeStarted(at:)``).
    private var startToTell: BreakEvent?

    init(options: BreakOptions, resolvers: ResolverRegistry,
         upFrontCues: (@Sendable (_ keepGoing: @Sendable () -> Bool) -> [SourceCue])?,
         emit: @escaping @Sendable (BreakEvent) -> Void) {
        self.options = options
        let (opportunityResolvers, contentResolvers) = resolvers.snapshot(subscription: options.subscription)
        self.opportunityResolvers = opportunityResolvers
        resolution = BreakResolution(opportunityResolvers: opportunityResolvers, contentResolvers: contentResolvers,
                                     timeout: options.resolverTimeout, upFrontCues: upFrontCues, emit: emit)
        self.emit = emit
    }

    /// Before the first packet: the wall clock and the monotonic clock read together (by the
    /// producer's driver, from the push's ``WallClock`` and ``MonotonicClock``), which put the
    /// wall-clock blackout windows on the output timeline (the breaks themselves open as the
    /// cues are read).
    func prepare(wallClock reading: WallClockReading) {
        wallReading = reading
        windows = options.blackouts
    }

    /// Where `window` starts on the output timeline, as `clock` maps it now.
    private func start(of window: BlackoutWindow, on clock: OutputClock) -> Int64 {
        window.outputStart { clock.outputTime(ofWallTime: $0, reading: wallReading) }
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
                    resolution.resolve(opportunity)
                case .cancelled(let opportunity):
                    resolution.cancel(opportunity)
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
    func breakDue(by time: Int64, on clock: OutputClock) -> BreakPlan? {
        // A handful of windows: placed afresh, since a pause moves the wall-clock ones only
        // (and only once one is due: this runs for every picture of the main input).
        if windows.contains(where: { start(of: $0, on: clock) <= time }) { openWindows(dueBy: time, on: clock) }
        while let window = schedule.start(dueBy: time) {
            let fills = fills(for: window.opportunity)
            if fills != [.main] {
                let plan = BreakPlan(window: window, fills: fills)
                // Told when it goes on air (its first fill may still be opening).
                startToTell = window.opportunity.kind == .blackout ? .blackoutStarted(window.opportunity)
                    : .breakStarted(window.opportunity, fill: fills.map(\.name).joined(separator: ", "))
                return plan
            }
            _ = schedule.finishActive()
        }
        return nil
    }

    /// Opens the blackout windows due by `time`, as `clock` places them now.
    private func openWindows(dueBy time: Int64, on clock: OutputClock) {
        let placed = windows.map { (start: start(of: $0, on: clock), duration: $0.duration.nanoseconds / 1000) }
        windows = zip(windows, placed).filter { $1.start > time }.map(\.0)
        for window in placed.filter({ $0.start <= time }).sorted(by: { $0.start < $1.start }) {
            // A window the push started inside of plays for what is left of it.
            let (start, end) = (max(time, window.start), window.start + window.duration)
            if end > start { openBlackout(at: start, duration: end - start) }
        }
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
        tellStart()
    }

    /// The due break's start, told once it is on air (or passed over).
    private func tellStart() {
        guard let event = startToTell else { return }
        startToTell = nil
        emit(event)
    }

    /// Where the next break would start, output time as `clock` maps it (nil: none is known).
    func nextStart(on clock: OutputClock) -> Int64? {
        var earliest = schedule.upcoming.first?.start
        for window in windows {
            let start = start(of: window, on: clock)
            earliest = min(earliest ?? start, start)
        }
        return earliest
    }

    /// The opportunity on air.
    var active: PlacementOpportunity? { schedule.active?.opportunity }

    /// Where the break on air ends, output time (nil: not known yet).
    var activeEnd: Int64? { schedule.active?.end }

    /// The break on air ends at `time` at the latest (its fill ran out and the main content
    /// comes back; an end command).
    func closeActive(at time: Int64, onAir: Bool = true) {
        schedule.closeActive(at: time, onAir: onAir)
    }

    func finishActive() {
        tellStart()
        guard let window = schedule.finishActive() else { return }
        emit(window.opportunity.kind == .blackout ? .blackoutEnded(window.opportunity) : .breakEnded(window.opportunity))
    }

    private func fills(for opportunity: PlacementOpportunity) -> [BreakFill] {
        let alternate: [BreakFill] = options.alternate != nil ? [.alternate] : [.slate]
        if opportunity.kind == .blackout { return alternate }
        let ads = resolution.resolvedAds(for: opportunity).map(BreakFill.ad)
        switch options.adBreakFallback {
        case .alternate: return ads + alternate
        case .slate: return ads + [.slate]
        case .main: return ads + [.main]
        }
    }
}
