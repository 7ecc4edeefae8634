import Synchronization

/// A few shared threads that run many timed jobs: the producers of real-time pushes, which
/// spend nearly all their time waiting for their next packets to fall due. A thread per
/// producer would only wait; here a waiting producer is an entry in a heap ordered by when it
/// is due.
///
/// A job runs on one thread at a time, until it says when it wants to run again. While it
/// runs, a ``wake(_:)`` makes it run again as soon as it returns. A job is expected to return
/// within a few milliseconds (``ScheduledJob`` bounds its own turn), so that the jobs sharing a
/// thread keep their pacing.
final class PacingScheduler: Sendable {
    /// Shared by every push in the process: one thread per core, two at least.
    static let shared = PacingScheduler(threads: WorkerThread.onePerCore)

    /// Jobs due within this long (µs) of the one that woke a thread run in the same wake-up.
    /// Hundreds of producers fall due at scattered instants; a thread that woke for each would
    /// spend most of the process's CPU switching (on a VM, a wake-up is an interrupt to another
    /// core). In windows, a thread wakes at most once per window, and the send loops the
    /// producers wake come along. A producer run early releases what is due within the window
    /// (``PacingGate/earlyRelease``).
    static let coalescingWindow: Int64 = 5_000

    /// The heap of waiting jobs and the idle threads. Each thread decides under this lock and
    /// wakes another (``ThreadParker``) after letting go of it.
    private let queue = Mutex(PacingQueue<ThreadParker>())

    init(threads: Int) {
        for _ in 0..<threads {
            WorkerThread.start(name: "livepush.pacing") { self.runThread() }
        }
    }

    /// Adds a job, due now.
    func add(_ job: any ScheduledJob) {
        queue.withLock { $0.add(job, now: monotonicMicroseconds()) }?.unpark()
    }

    /// Runs the job now (a command arrived, its outputs changed): at once if it waits, right
    /// after its current turn if it runs.
    func wake(_ job: any ScheduledJob) {
        queue.withLock { $0.wake(job, now: monotonicMicroseconds()) }?.unpark()
    }

    private func runThread() {
        let parker = ThreadParker()
        var window = CoalescingWindow(length: Self.coalescingWindow)
        // The jobs that ran since their work was last passed on.
        var ran: [any ScheduledJob] = []
        while true {
            let (job, helper) = queue.withLock { $0.takeDueJob(&window, now: monotonicMicroseconds()) }
            helper?.unpark()
            guard let job else {
                // Before the thread sleeps, the window's work goes to the send loops, in one go.
                passOn(&ran, &window)
                sleep(on: parker, window)
                continue
            }
            window.ran(at: monotonicMicroseconds())
            let next = job.run()
            queue.withLock { $0.endTurn(of: job, next, now: monotonicMicroseconds()) }?.unpark()
            ran.append(job)
            if window.passesOn(now: monotonicMicroseconds()) { passOn(&ran, &window) }
        }
    }

    /// Sleeps until the first job falls due, or a new first one arrives; not at all if one is
    /// due already (it was queued while the thread passed its work on).
    private func sleep(on parker: ThreadParker, _ window: CoalescingWindow) {
        guard case .sleep(let deadline) = queue.withLock({ $0.park(parker, window: window, now: monotonicMicroseconds()) }),
              !parker.park(until: deadline) else { return }
        // The deadline passed. A thread that was taken to be woken meanwhile takes that wake-up
        // now, so that its next sleep is not cut short by it.
        if !queue.withLock({ $0.leave(parker) }) { parker.park(until: nil) }
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
