import Foundation
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
    static let shared = PacingScheduler(threads: max(2, ProcessInfo.processInfo.activeProcessorCount))

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

    /// Called with the lock held.
    private func enqueue(_ job: any ScheduledJob, due: Int64) {
        let id = ObjectIdentifier(job)
        jobs[id, default: JobState()].generation += 1
        order += 1
        heap.insert(Entry(due: due, order: order, job: job, generation: jobs[id]!.generation))
        lock.broadcast()
    }

    private func runThread() {
        while true {
            let job = lock.withLock { () -> (any ScheduledJob) in
                while true {
                    guard let first = heap.min else {
                        lock.wait()
                        continue
                    }
                    let id = ObjectIdentifier(first.job)
                    guard let state = jobs[id], state.generation == first.generation, !state.isRunning else {
                        _ = heap.removeMin()  // superseded by a later entry, or the job is gone
                        continue
                    }
                    let wait = first.due - monotonicMicroseconds()
                    if wait > 0 {
                        lock.wait(timeout: .microseconds(wait))
                        continue
                    }
                    _ = heap.removeMin()
                    jobs[id]?.isRunning = true
                    jobs[id]?.wokenWhileRunning = false
                    return first.job
                }
            }
            let next = job.run()
            lock.withLock {
                let id = ObjectIdentifier(job)
                let woken = jobs[id]?.wokenWhileRunning ?? false
                jobs[id]?.isRunning = false
                switch next {
                case .finished:
                    jobs[id] = nil
                case .at(let due):
                    enqueue(job, due: woken ? monotonicMicroseconds() : due)
                case .whenWoken:
                    if woken { enqueue(job, due: monotonicMicroseconds()) }
                }
            }
        }
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
}
