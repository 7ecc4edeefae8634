import HeapModule

/// What the ``PacingScheduler`` keeps under its lock: the waiting jobs in a heap by due time,
/// where each job stands, and its idle threads. Pure: each method takes the time and returns
/// what the calling thread does next (a job to run, a thread to wake, how long to sleep); the
/// scheduler's threads do the running, waking and sleeping.
struct PacingQueue<Parker: AnyObject> {
    private struct Entry: Comparable {
        var due: Int64
        var order: UInt64
        var job: any ScheduledJob
        var generation: UInt64

        static func < (a: Entry, b: Entry) -> Bool { (a.due, a.order) < (b.due, b.order) }
        static func == (a: Entry, b: Entry) -> Bool { a.due == b.due && a.order == b.order }
    }

    /// Where a job stands, by its id.
    private struct JobState {
        /// Bumped whenever the job is queued again, so that older heap entries are ignored.
        var generation: UInt64 = 0
        var isRunning = false
        var wokenWhileRunning = false
    }

    private var heap = Heap<Entry>()
    private var jobs: [ObjectIdentifier: JobState] = [:]
    private var order: UInt64 = 0
    private(set) var parked = ParkedThreads<Parker>()

    /// A new job, due now; returns the thread to wake for it.
    mutating func add(_ job: any ScheduledJob, now: Int64) -> Parker? {
        jobs[ObjectIdentifier(job)] = JobState()
        return enqueue(job, due: now, now: now)
    }

    /// Runs the job now: at once if it waits (returns the thread to wake), right after its
    /// current turn if it runs.
    mutating func wake(_ job: any ScheduledJob, now: Int64) -> Parker? {
        let id = ObjectIdentifier(job)
        guard let state = jobs[id] else { return nil }
        if state.isRunning {
            jobs[id]?.wokenWhileRunning = true
            return nil
        }
        return enqueue(job, due: now, now: now)
    }

    /// The first job due now or within the open window, marked running (nil when none is),
    /// and an idle thread to wake to help once the next job is overdue: with a backlog, every
    /// thread works on it, the one sleeping until a later deadline too. A job due later in the
    /// window waits for the calling thread, which runs the window's jobs ahead of their time
    /// while it keeps up: a helper woken for it cost a wake-up, and its own pass-on woke the
    /// send loops a second time, at every window of a few hundred channels.
    mutating func takeDueJob(_ window: inout CoalescingWindow, now: Int64) -> (job: (any ScheduledJob)?, helper: Parker?) {
        guard let first = firstValidEntry(), window.admits(due: first.due, now: now) else { return (nil, nil) }
        _ = heap.removeMin()
        let id = ObjectIdentifier(first.job)
        jobs[id]?.isRunning = true
        jobs[id]?.wokenWhileRunning = false
        guard let next = firstValidEntry(), next.due <= now else { return (first.job, nil) }
        return (first.job, parked.takeHelper(forJobDue: next.due, now: now))
    }

    /// What a thread with no job to run does.
    enum Idle: Equatable {
        /// A job fell due while the thread passed its work on: it looks at the heap again.
        case lookAgain
        /// It is parked: it sleeps until this monotonic time (µs), or until woken for nil.
        case sleep(until: Int64?)
    }

    /// The thread parks, unless a job is due within its window by now.
    mutating func park(_ parker: Parker, window: CoalescingWindow, now: Int64) -> Idle {
        let first = firstValidEntry()
        if let first, window.sleep(forJobDue: first.due, now: now) == nil { return .lookAgain }
        return .sleep(until: parked.park(parker, firstDue: first?.due))
    }

    /// A parked thread's deadline passed: see ``ParkedThreads/leave(_:)``.
    mutating func leave(_ parker: Parker) -> Bool {
        parked.leave(parker)
    }

    /// The job's turn ended; returns the thread to wake, if its next turn is due now.
    mutating func endTurn(of job: any ScheduledJob, _ next: ScheduledRun, now: Int64) -> Parker? {
        let id = ObjectIdentifier(job)
        let woken = jobs[id]?.wokenWhileRunning ?? false
        jobs[id]?.isRunning = false
        switch next {
        case .finished:
            jobs[id] = nil
            return nil
        case .at(let due):
            return enqueue(job, due: woken ? now : due, now: now, byPacingThread: true)
        case .whenWoken:
            return woken ? enqueue(job, due: now, now: now) : nil
        }
    }

    /// `byPacingThread`: a pacing thread re-queues the job it just ran; it looks at the heap
    /// again before it parks, so no other thread needs waking for a job due later (at one push
    /// per batch, that wake-up cost more than the push's packets).
    private mutating func enqueue(_ job: any ScheduledJob, due: Int64, now: Int64, byPacingThread: Bool = false) -> Parker? {
        let id = ObjectIdentifier(job)
        jobs[id, default: JobState()].generation += 1
        order += 1
        // The sleeping threads wait for the first entry: only a new first one changes that.
        let isFirst = heap.min.map { due < $0.due } ?? true
        heap.insert(Entry(due: due, order: order, job: job, generation: jobs[id]!.generation))
        guard isFirst, !(byPacingThread && due > now) else { return nil }
        return parked.takeForFirstJob(due: due, now: now)
    }

    /// The heap's first entry, once the entries superseded by a later one (or of jobs that
    /// are gone or running) are dropped.
    private mutating func firstValidEntry() -> Entry? {
        while let first = heap.min {
            if let state = jobs[ObjectIdentifier(first.job)], state.generation == first.generation, !state.isRunning { return first }
            _ = heap.removeMin()
        }
        return nil
    }
}
