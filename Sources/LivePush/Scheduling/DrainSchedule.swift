/// When a queue's drain runs: the pure part of ``SerialDrain``.
///
/// A queue with work gets one drain job on a worker pool, never two at once; work offered
/// while one is waiting to start needs nothing more (it will see it), and work offered while
/// one runs makes it run again when it ends, because it may already have looked. A queue with
/// nothing to do has no job and so holds no thread.
struct DrainSchedule: Equatable, Sendable {
    enum State: Equatable, Sendable {
        /// No job: the next offer schedules one.
        case idle
        /// A job is scheduled and has not started.
        case scheduled
        /// A job runs; `offeredSince` records an offer made since it started.
        case running(offeredSince: Bool)
    }

    /// What a drain's turn found when it returned.
    enum Turn: Equatable, Sendable {
        /// The queue was empty when it last looked.
        case drained
        /// It stopped with work left (its turn was up), so that other queues' jobs get theirs.
        case more
    }

    private(set) var state: State = .idle

    /// Work was offered. Returns whether to schedule a job.
    mutating func offer() -> Bool {
        switch state {
        case .idle:
            state = .scheduled
            return true
        case .scheduled:
            return false
        case .running:
            state = .running(offeredSince: true)
            return false
        }
    }

    /// The scheduled job starts its turn.
    mutating func start() {
        precondition(state == .scheduled, "a drain started that was not scheduled: \(state)")
        state = .running(offeredSince: false)
    }

    /// The running job's turn ended. Returns whether to schedule it again.
    mutating func end(_ turn: Turn) -> Bool {
        guard case .running(let offeredSince) = state else {
            preconditionFailure("a drain ended that was not running: \(state)")
        }
        if turn == .more || offeredSince {
            state = .scheduled
            return true
        }
        state = .idle
        return false
    }
}
