/// The opportunities open, and the one on air, on the **output** timeline (µs). Pure: it is
/// told what the cues mean (with the offset that puts the input's time on the output, as the
/// input was mapped when the cue arrived) and where the output stands, and answers which break
/// to play. Output time keeps positions meaningful across loops and playout entries, whose
/// own timelines start over.
struct BreakSchedule: Sendable {
    /// An opportunity, where it starts and where it ends (nil until a closing cue says).
    struct Window: Sendable, Equatable {
        var opportunity: PlacementOpportunity
        var start: Int64
        var end: Int64?
        /// Ended by a command before it went on air (its first fill was still opening).
        var closedBeforeStart = false
    }

    enum Change: Equatable {
        case opened(PlacementOpportunity)
        case cancelled(PlacementOpportunity)
        /// A repeat, an update of one already known, or a signal for nothing known.
        case none
    }

    private(set) var upcoming: [Window] = []
    private(set) var active: Window?
    /// Breaks played or called off lately: a repeated cue for one of them is not a new
    /// opportunity (the same id again later, e.g. the next pass of a loop, is).
    private var finished: [(id: UInt32, end: Int64)] = []
    private static let finishedMemory = 64

    /// `mapping` puts the signal's input times on the output timeline.
    mutating func apply(_ signal: OpportunitySignal, mapping: InputTimeMapping = .identity) -> Change {
        switch signal {
        case .opens(let opportunity):
            let start = mapping.outputTime(opportunity.start)
            if finished.contains(where: { $0.id == opportunity.id && start < $0.end }) || active?.opportunity.id == opportunity.id {
                return .none
            }
            let end = opportunity.duration.map { start + $0 }
            if let index = upcoming.firstIndex(where: { $0.opportunity.id == opportunity.id }) {
                upcoming[index].opportunity.duration = opportunity.duration ?? upcoming[index].opportunity.duration
                upcoming[index].end = end ?? upcoming[index].end
                return .none
            }
            upcoming.append(Window(opportunity: opportunity, start: start, end: end))
            upcoming.sort { $0.start < $1.start }
            return .opened(opportunity)
        case .closes(let id, let at):
            if let window = active, window.opportunity.id == id {
                active?.end = min(window.end ?? .max, max(window.start, mapping.outputTime(at)))
            } else if let index = upcoming.firstIndex(where: { $0.opportunity.id == id }) {
                upcoming[index].end = max(upcoming[index].start, mapping.outputTime(at))
            }
            return .none
        case .cancels(let id):
            if let window = active, window.opportunity.id == id {
                active?.end = window.start  // ends at the next look
                return .cancelled(window.opportunity)
            }
            guard let index = upcoming.firstIndex(where: { $0.opportunity.id == id }) else { return .none }
            let window = upcoming.remove(at: index)
            remember(window)
            return .cancelled(window.opportunity)
        }
    }

    /// The main input's next picture goes out at output time `time`: the window that starts by
    /// then goes on air. Windows that ended before it are dropped unplayed.
    mutating func start(dueBy time: Int64) -> Window? {
        guard active == nil else { return nil }
        while let first = upcoming.first, let end = first.end, end <= time {
            remember(upcoming.removeFirst())
        }
        guard let first = upcoming.first, first.start <= time else { return nil }
        active = upcoming.removeFirst()
        return active
    }

    /// The break on air actually started at `time` (where the output stood): a length that was
    /// not fixed by a cue (a command's, a window's) counts from there.
    mutating func activeStarted(at time: Int64) {
        guard let window = active else { return }
        if window.closedBeforeStart {
            // An end command came first: it ends where it starts.
            active?.start = time
            active?.end = time
            return
        }
        guard window.opportunity.cue == nil, let duration = window.opportunity.duration else { return }
        active?.start = time
        active?.end = time + duration
    }

    /// The window on air ends at `time` at the latest (its fill ran out; an end command, which
    /// may come while the first fill still opens: `onAir` false).
    mutating func closeActive(at time: Int64, onAir: Bool = true) {
        guard let window = active else { return }
        active?.end = min(window.end ?? .max, max(window.start, time))
        if !onAir { active?.closedBeforeStart = true }
    }

    /// The window on air is over.
    mutating func finishActive() -> Window? {
        defer { active = nil }
        if let window = active { remember(window) }
        return active
    }

    private mutating func remember(_ window: Window) {
        finished.append((window.opportunity.id, window.end ?? window.start))
        if finished.count > Self.finishedMemory { finished.removeFirst() }
    }
}
