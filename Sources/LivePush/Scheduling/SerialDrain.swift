import Synchronization

/// Runs a queue's work as jobs on a process-wide bounded pool, one at a time and only while
/// there is work: no thread of its own waits for it.
///
/// The owner keeps its queue (and its cap, and what happens when it is full) and calls
/// ``offer(_:)`` after adding to it. A job then calls `turn` on one of the pool's threads; `turn`
/// takes what is queued and does it, and returns ``DrainSchedule/Turn/drained`` once it found
/// the queue empty, or ``DrainSchedule/Turn/more`` to give the thread to other queues' jobs
/// before going on. Turns never overlap, so what `turn` uses needs no other exclusion. A queue
/// that keeps a job busy is one job among the pool's others: the pool's threads are bounded,
/// the queues are not.
final class SerialDrain: Sendable {
    private let schedule = Mutex(DrainSchedule())
    private let workers: ConnectionWorkers

    init(on workers: ConnectionWorkers) {
        self.workers = workers
    }

    /// Work was added: a job runs `turn` soon, unless one is scheduled or running (which sees
    /// the work). `turn` is the owner's one drain function every time; it is held (and with it
    /// the owner) only while a job is scheduled or running, so an idle queue keeps nothing alive.
    func offer(_ turn: @escaping @Sendable () -> DrainSchedule.Turn) {
        if schedule.withLock({ $0.offer() }) { submit(turn) }
    }

    /// Whether a job is scheduled or running (for tests).
    var isIdle: Bool { schedule.withLock { $0.state == .idle } }

    /// Turns one job runs for work offered while it ran before it goes to the back of the pool's
    /// line: a few, so that a queue fed while it drains does not go through the heap for every
    /// batch, and not more, so that it does not keep the thread from other queues' jobs.
    static let turnsPerJob = 8

    private func submit(_ turn: @escaping @Sendable () -> DrainSchedule.Turn, continuing: Bool = false) {
        workers.run(continuing: continuing) { [self] in
            for round in 1... {
                schedule.withLock { $0.start() }
                let result = turn()
                guard schedule.withLock({ $0.end(result) }) else { return }
                if result == .more || round == Self.turnsPerJob { break }
            }
            // Submitted by this job as it returns: this thread takes the next entry, whichever it is.
            submit(turn, continuing: true)
        }
    }
}
