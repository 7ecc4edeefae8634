/// The idle threads of a pool that runs jobs from a heap by due time (``PacingScheduler``,
/// ``ConnectionWorkers``), and which of them to wake. Pure: the pool keeps it under its lock,
/// and wakes the thread a method hands back once the lock is released.
///
/// One thread sleeps until the first job falls due (the deadline sleeper); the others sleep
/// until woken. When every idle thread slept until the same due time, each turn woke them all
/// and all but one went back to sleep. A thread handed back by a `take` method is off the list:
/// the pool wakes it exactly once.
struct ParkedThreads<Parker: AnyObject> {
    /// The thread sleeping until the first job falls due, and that time (monotonic µs).
    private(set) var deadlineSleeper: (parker: Parker, deadline: Int64)?
    /// The threads sleeping until woken. One may still have a timer running (a former deadline
    /// sleeper, or a worker waiting to exit when idle): it wakes and leaves on its own.
    private var others: [Parker] = []

    var count: Int { others.count + (deadlineSleeper == nil ? 0 : 1) }

    /// A thread parks; returns the time it sleeps until, nil for until woken. `firstDue`: when
    /// the first job waiting falls due, if there is one. Nobody waking by then makes it the
    /// deadline sleeper (a thread that re-queued its job for earlier than the current deadline
    /// sleeper looks at the heap again before it parks, and takes the deadline over).
    mutating func park(_ parker: Parker, firstDue: Int64?) -> Int64? {
        guard let firstDue, deadlineSleeper.map({ $0.deadline > firstDue }) ?? true else {
            others.append(parker)
            return nil
        }
        if let former = deadlineSleeper { others.append(former.parker) }
        deadlineSleeper = (parker, firstDue)
        return firstDue
    }

    /// A parked thread whose timer ran out leaves the list. False when it was taken already:
    /// then a wake is on its way, and it must take it (an untimed park) before it parks again.
    mutating func leave(_ parker: Parker) -> Bool {
        if deadlineSleeper?.parker === parker {
            deadlineSleeper = nil
            return true
        }
        guard let index = others.firstIndex(where: { $0 === parker }) else { return false }
        others.remove(at: index)
        return true
    }

    /// The thread to wake for a new first job, due at `due`, if one must wake: for a job due now
    /// an idle one before the deadline sleeper (which keeps its deadline); for a later one, the
    /// deadline sleeper to sleep until then instead, unless it wakes by then anyway.
    mutating func takeForFirstJob(due: Int64, now: Int64) -> Parker? {
        if due <= now { return others.popLast() ?? takeDeadlineSleeper() }
        if wakes(by: due) { return nil }
        return takeDeadlineSleeper() ?? others.popLast()
    }

    /// Whether a parked thread wakes by `due` anyway (the deadline sleeper).
    func wakes(by due: Int64) -> Bool {
        deadlineSleeper.map { $0.deadline <= due } ?? false
    }

    /// A thread to help with a job due at `due`, about now: an idle one, or the deadline
    /// sleeper once the job is overdue and the sleeper would not wake for it by itself (with
    /// two threads, one running behind and one asleep until the next batch, the backlog would
    /// otherwise have one thread).
    mutating func takeHelper(forJobDue due: Int64, now: Int64) -> Parker? {
        if let idle = others.popLast() { return idle }
        return due <= now && !wakes(by: due) ? takeDeadlineSleeper() : nil
    }

    private mutating func takeDeadlineSleeper() -> Parker? {
        defer { deadlineSleeper = nil }
        return deadlineSleeper?.parker
    }
}
