/// Decides from the send-queue backlog (milliseconds of media waiting) whether the network
/// keeps up, with hysteresis so that a single slow write does not flap the state.
///
/// Poor: the backlog stayed at or above `poorBacklog` for `hold`. Recovered: it stayed at or
/// below `recoveredBacklog` for `hold`.
struct CongestionDetector: Sendable {
    enum Change: Sendable, Equatable { case poor, recovered }

    let poorBacklog: Int64
    let recoveredBacklog: Int64
    let hold: Int64
    private(set) var isPoor = false
    private var conditionSince: Int64?

    /// Backlogs and times in microseconds.
    init(poorBacklog: Int64, recoveredBacklog: Int64, hold: Int64) {
        self.poorBacklog = poorBacklog
        self.recoveredBacklog = min(recoveredBacklog, poorBacklog)
        self.hold = hold
    }

    mutating func update(backlog: Int64, now: Int64) -> Change? {
        let leaning = isPoor ? backlog <= recoveredBacklog : backlog >= poorBacklog
        guard leaning else {
            conditionSince = nil
            return nil
        }
        let since = conditionSince ?? now
        conditionSince = since
        guard now - since >= hold else { return nil }
        isPoor.toggle()
        conditionSince = nil
        return isPoor ? .poor : .recovered
    }
}
