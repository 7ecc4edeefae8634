/// The opportunities open on the main input's timeline, and the one on air. Pure: it is told
/// what the cues mean and where the main input stands, and answers which break to play.
struct BreakSchedule: Sendable {
    /// An opportunity and where it ends (input time; nil until a closing cue says).
    struct Window: Sendable, Equatable {
        var opportunity: PlacementOpportunity
        var end: Int64?
    }

    enum Change: Equatable {
        case opened(PlacementOpportunity)
        case cancelled(PlacementOpportunity)
        /// A repeat, an update of one already known, or a signal for nothing known.
        case none
    }

    private(set) var upcoming: [Window] = []
    private(set) var active: Window?
    /// Ids played or called off lately: a repeated cue for them is not a new opportunity.
    private var finished: [UInt32] = []
    private static let finishedMemory = 64

    mutating func apply(_ signal: OpportunitySignal) -> Change {
        switch signal {
        case .opens(let opportunity):
            if finished.contains(opportunity.id) || active?.opportunity.id == opportunity.id { return .none }
            let end = opportunity.duration.map { opportunity.start + $0 }
            if let index = upcoming.firstIndex(where: { $0.opportunity.id == opportunity.id }) {
                upcoming[index].opportunity.duration = opportunity.duration ?? upcoming[index].opportunity.duration
                upcoming[index].end = end ?? upcoming[index].end
                return .none
            }
            upcoming.append(Window(opportunity: opportunity, end: end))
            upcoming.sort { $0.opportunity.start < $1.opportunity.start }
            return .opened(opportunity)
        case .closes(let id, let at):
            if active?.opportunity.id == id, let window = active {
                active?.end = min(window.end ?? .max, max(window.opportunity.start, at))
            } else if let index = upcoming.firstIndex(where: { $0.opportunity.id == id }) {
                upcoming[index].end = max(upcoming[index].opportunity.start, at)
            }
            return .none
        case .cancels(let id):
            if let window = active, window.opportunity.id == id {
                active?.end = window.opportunity.start  // ends at the next look
                return .cancelled(window.opportunity)
            }
            guard let index = upcoming.firstIndex(where: { $0.opportunity.id == id }) else { return .none }
            remember(id)
            return .cancelled(upcoming.remove(at: index).opportunity)
        }
    }

    /// The main input's next packet is at input time `time`: the window that starts by then
    /// goes on air. Windows that ended before it are dropped unplayed.
    mutating func start(dueBy time: Int64) -> Window? {
        guard active == nil else { return nil }
        while let first = upcoming.first, let end = first.end, end <= time {
            remember(upcoming.removeFirst().opportunity.id)
        }
        guard let first = upcoming.first, first.opportunity.start <= time else { return nil }
        active = upcoming.removeFirst()
        return active
    }

    /// The window on air ends at `time` at the latest (its fill ran out; an end command).
    mutating func closeActive(at time: Int64) {
        guard let window = active else { return }
        active?.end = min(window.end ?? .max, max(window.opportunity.start, time))
    }

    /// The window on air is over.
    mutating func finishActive() -> Window? {
        defer { active = nil }
        if let id = active?.opportunity.id { remember(id) }
        return active
    }

    private mutating func remember(_ id: UInt32) {
        finished.append(id)
        if finished.count > Self.finishedMemory { finished.removeFirst() }
    }
}
