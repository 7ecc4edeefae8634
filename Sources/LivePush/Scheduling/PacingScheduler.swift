import HeapModule

/// A few shared threads that run many timed jobs: the producers of real-time pushes, which
/// spend nearly all their time waiting for their next packets to fall due. A thread per
/// producer would only wait; here a waiting producer is an entry in a heap ordered by when it
/// is due.
///
/// A job runs on one thread at a time, until it says when it wants to run again. While it
/// runs, a ``wake(_:)`` makes it run again as soon as it returns. A job is expected to return
/// within a few milliseconds (``ScheduledJob`` bounds its own turn), so that the jobs sharing a
/// thread keep their pacing.
final class PacingScheduler: @unchecked Sendable {
    /// Shared by every push in the process: one thread per core, two at least.
    static let shared = PacingScheduler(threads: WorkerThread.onePerCore)

    /// Jobs due within this long (µs) of the one that woke a thread run in the same wake-up.
    /// Hundreds of producers fall due at scattered instants; a thread that woke for each would
    /// spend most of the process's CPU switching (on a VM, a wake-up is an interrupt to another
    /// core). In windows, a thread wakes at most once per window, and the send loops the
    /// producers wake come along. A producer run early releases what is due within the window
    /// (``PacingGate/earlyRelease``).
    static let coalescingWindow: Int64 = 5_000

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

    private let lock = ConditionLock()
    private var heap = Heap<Entry>()
    private var jobs: [ObjectIdentifier: JobState] = [:]
    private var order: UInt64 = 0
    /// Whether a thread sleeps until the first entry falls due. The others sleep until woken:
    /// when every idle thread slept until the same due time, each turn woke them all and all but
    /// one went back to sleep.
    private var timedSleeper = false

    init(threads: Int) {
        for _ in 0..<threads {
            WorkerThread.start(name: "livepush.pacing") { self.runThread() }
        }
    }

    /// Adds a job, due now.
    func add(_ job: any ScheduledJob) {
        lock.withLock {
            jobs[ObjectIdentifier(job)] = JobState()
            enqueue(job, due: monotonicMicroseconds())
        }
    }

    /// Runs the job now (a command arrived, its outputs changed): at once if it waits, right
    /// after its current turn if it runs.
    func wake(_ job: any ScheduledJob) {
        lock.withLock {
            guard var state = jobs[ObjectIdentifier(job)] else { return }
            if state.isRunning {
                state.wokenWhileRunning = true
                jobs[ObjectIdentifier(job)] = state
            } else {
                enqueue(job, due: monotonicMicroseconds())
            }
        }
    }

    /// Called with the lock held. `byPacingThread`: a pacing thread re-queues the job it just
    /// ran; it looks at the heap again before it sleeps, so no other thread needs waking for a
    /// job due later (at one push per batch, that wake-up cost more than the push's packets).
    private func enqueue(_ job: any ScheduledJob, due: Int64, byPacingThread: Bool = false) {
        let id = ObjectIdentifier(job)
        jobs[id, default: JobState()].generation += 1
        order += 1
        // A thread that sleeps waits for the first entry: only a new first one changes that.
        let isFirst = heap.min.map { due < $0.due } ?? true
        heap.insert(Entry(due: due, order: order, job: job, generation: jobs[id]!.generation))
        // Every sleeper: the one that sleeps until the old first entry must see the new one.
        if isFirst && !(byPacingThread && due > monotonicMicroseconds()) { lock.broadcast() }
    }

    private func runThread() {
        var window = CoalescingWindow(length: Self.coalescingWindow)
        // The jobs that ran since their work was last passed on.
        var ran: [any ScheduledJob] = []
        while true {
            guard let job = lock.withLock({ takeDueJob(&window) }) else {
                // Before the thread sleeps, the window's work goes to the send loops, in one go.
                passOn(&ran, &window)
                lock.withLock { sleepUntilDue(window) }
                continue
            }
            window.ran(at: monotonicMicroseconds())
            let next = job.run()
            endTurn(of: job, next)
            ran.append(job)
            if window.passesOn(now: monotonicMicroseconds()) { passOn(&ran, &window) }
        }
    }

    /// The first job due now or within the open window, marked running; nil when none is.
    /// Called with the lock held.
    private func takeDueJob(_ window: inout CoalescingWindow) -> (any ScheduledJob)? {
        guard let first = firstValidEntry(), window.admits(due: first.due, now: monotonicMicroseconds()) else { return nil }
        _ = heap.removeMin()
        let id = ObjectIdentifier(first.job)
        jobs[id]?.isRunning = true
        jobs[id]?.wokenWhileRunning = false
        // More work due before this turn is likely over: an idle thread helps with it (and
        // the next sleeper takes over the deadline); otherwise this thread will be back first.
        if let next = firstValidEntry(), next.due <= monotonicMicroseconds() + Self.coalescingWindow { lock.signal() }
        return first.job
    }

    /// Waits until the first job falls due, or a new first one arrives; at once if one is due
    /// already (it was queued while the thread passed its work on). Called with the lock held.
    private func sleepUntilDue(_ window: CoalescingWindow) {
        guard let first = firstValidEntry() else {
            lock.wait()
            return
        }
        guard let sleep = window.sleep(forJobDue: first.due, now: monotonicMicroseconds()) else { return }
        if timedSleeper {
            lock.wait()
            return
        }
        timedSleeper = true
        lock.wait(timeout: .microseconds(sleep))
        timedSleeper = false
    }

    /// The heap's first entry, once the entries superseded by a later one (or of jobs that
    /// are gone or running) are dropped. Called with the lock held.
    private func firstValidEntry() -> Entry? {
        while let first = heap.min {
            if let state = jobs[ObjectIdentifier(first.job)], state.generation == first.generation, !state.isRunning { return first }
            _ = heap.removeMin()
        }
        return nil
    }

    private func endTurn(of job: any ScheduledJob, _ next: ScheduledRun) {
        lock.withLock {
            let id = ObjectIdentifier(job)
            let woken = jobs[id]?.wokenWhileRunning ?? false
            jobs[id]?.isRunning = false
            switch next {
            case .finished:
                jobs[id] = nil
            case .at(let due):
                enqueue(job, due: woken ? monotonicMicroseconds() : due, byPacingThread: true)
            case .whenWoken:
                if woken { enqueue(job, due: monotonicMicroseconds()) }
            }
        }
    }

    private func passOn(_ ran: inout [any ScheduledJob], _ window: inout CoalescingWindow) {
        for job in ran { job.passOnWork() }
        ran.removeAll(keepingCapacity: true)
        window.passedOn()
    }
}

/// What a job of the ``PacingScheduler`` says when its turn ends.
enum ScheduledRun: Equatable {
    /// Run again at this monotonic time (µs), or earlier when woken.
    case at(Int64)
    /// Run again only when woken.
    case whenWoken
    case finished
}

/// A job of the ``PacingScheduler``: one turn at a time, a few milliseconds at most.
protocol ScheduledJob: AnyObject, Sendable {
    func run() -> ScheduledRun
    /// Hands what the job's turns produced to whoever takes it on (a producer wakes its
    /// outputs' send loops): called by the thread that ran it, before that thread sleeps and
    /// at least once per coalescing window, so that a window's work is passed on together.
    func passOnWork()
}
