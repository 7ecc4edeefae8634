import HeapModule
import Synchronization

/// A few threads for blocking work (librtmp's connect and handshake, libavformat's open, a
/// graceful close, a file read ahead), and the timers that hold the waits between attempts.
///
/// A channel whose server is away spends nearly all its time waiting for its next attempt. A
/// thread per waiting output would only sleep: 200 channels would hold 200 threads. Here a
/// wait is an entry in a heap; one thread sleeps until the first one falls due, and the others
/// exist only while attempts run. At most ``maximumThreads`` attempts run at once; more wait
/// their turn in the heap (an attempt to a dead host can block for its connect timeout, and
/// it blocks only its own turn). A thread that has had nothing to do for ``idleExit`` exits.
final class ConnectionWorkers: Sendable {
    /// Shared by every push in the process: connects, and the waits between them.
    static let shared = ConnectionWorkers(maximumThreads: 16)
    /// Graceful closes, which wait for the server to finish (at most the send timeout each):
    /// a process stopping a thousand channels at once closes them sixteen at a time rather
    /// than start a thread for each, and its closes never hold up a reconnect.
    static let closing = ConnectionWorkers(maximumThreads: 16, name: "livepush.close")
    /// Reading ahead in files before a push (the pass over a file's cues that its content
    /// resolvers answer up front, ``CueScan``): whole-file I/O that must hold up no pacing
    /// thread, and that a few threads do as fast as the disk allows.
    static let scanning = ConnectionWorkers(maximumThreads: 2, name: "livepush.scan")
    /// Opening inputs: a channel's push (its input's probe, a file, DNS; `ChannelOpener`) and a
    /// playout entry opened ahead (`PlayoutProgram`). A live feed's probe can wait its whole
    /// timeout, and it holds up only its own turn.
    static let opening = ConnectionWorkers(maximumThreads: 16, name: "livepush.open")
    /// Recordings' writes (``FLVRecorder``): a job per recording with packets queued, which
    /// writes them and returns.
    static let recording = ConnectionWorkers(maximumThreads: 2, name: "livepush.record")
    /// Detectors (``DetectorTap``): a job per detector with a frame waiting. Detection is the
    /// app's CPU work, so one thread per core (two at least).
    static let detecting = ConnectionWorkers(maximumThreads: WorkerThread.onePerCore, name: "livepush.detect")
    /// Decoding local music and effects (``AudioStreamPlayer``) into their rings, far faster
    /// than real time: a job fills a ring and returns.
    static let decodingAudio = ConnectionWorkers(maximumThreads: 2, name: "livepush.audio")
    /// Music and effects from the network: a read can block for the download timeout, so they
    /// have a pool of their own, and a stalled server holds up no local music and no connect.
    static let fetchingAudio = ConnectionWorkers(maximumThreads: 16, name: "livepush.fetch")
    /// HLS outputs' stores (``HLSWriter``): a job per output with segments queued, which writes
    /// them (a file, an upload that can wait for its timeout) and returns.
    static let hlsWriting = ConnectionWorkers(maximumThreads: 16, name: "livepush.hlsout")

    /// A scheduled job, to run it earlier (``runNow(_:)``) or drop it (``cancel(_:)``).
    struct Ticket: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    static let idleExit: Int64 = 2_000_000

    let maximumThreads: Int
    private let name: String
    /// The waiting jobs and the threads. Each thread decides under this lock, and wakes or
    /// starts another after letting go of it.
    private let state: Mutex<State>

    init(maximumThreads: Int, name: String = "livepush.conn") {
        self.maximumThreads = max(1, maximumThreads)
        self.name = name
        state = Mutex(State(maximumThreads: self.maximumThreads))
    }

    /// Runs `body` on one of the workers after `delay` (at once for zero).
    ///
    /// `continuing`: a job of this pool submits its own continuation as it returns (a
    /// ``SerialDrain`` giving other queues their turn). It starts no thread: the submitting
    /// thread is about to take the next entry, and a new one would only make the pool grow with
    /// every queue that keeps a job busy.
    @discardableResult
    func run(after delay: Duration = .zero, continuing: Bool = false, _ body: @escaping @Sendable () -> Void) -> Ticket {
        let (ticket, wake) = state.withLock { state in
            let due = monotonicMicroseconds() + max(0, delay.nanoseconds / 1000)
            return state.add(body, due: due, startsThread: !continuing, now: monotonicMicroseconds())
        }
        perform(wake)
        return ticket
    }

    /// Makes a waiting job due now (a stop, or a requested reconnect, cuts the wait short). No
    /// effect once it has started.
    func runNow(_ ticket: Ticket) {
        perform(state.withLock { $0.runNow(ticket.id, now: monotonicMicroseconds()) })
    }

    /// Drops a job that has not started.
    func cancel(_ ticket: Ticket) {
        state.withLock { _ = $0.jobs.removeValue(forKey: ticket.id) }
    }

    /// Figures for tests and the thread budget: threads alive, and jobs waiting.
    var figures: (threads: Int, waiting: Int) { state.withLock { ($0.threads, $0.jobs.count) } }

    private func perform(_ wake: State.Wake) {
        wake.parker?.unpark()
        if wake.startsThread { WorkerThread.start(name: name) { self.runThread() } }
    }

    private func runThread() {
        let parker = ThreadParker()
        var idleSince = monotonicMicroseconds()
        while true {
            switch state.withLock({ $0.next(for: parker, idleSince: idleSince, now: monotonicMicroseconds()) }) {
            case .run(let job, let wake):
                perform(wake)
                job()
                idleSince = monotonicMicroseconds()
                state.withLock { $0.idle += 1 }
            case .sleep(let deadline):
                if parker.park(until: deadline) { continue }
                // The deadline passed. A thread that was taken to be woken meanwhile takes that
                // wake-up now, so that its next sleep is not cut short by it.
                if !state.withLock({ $0.parked.leave(parker) }) { parker.park(until: nil) }
            case .exit:
                return
            }
        }
    }
}

extension ConnectionWorkers {
    /// What the pool keeps under its lock. Pure: its methods take the time and return what the
    /// calling thread does next.
    private struct State {
        struct Entry: Comparable {
            var due: Int64
            var id: UInt64
            static func < (a: Entry, b: Entry) -> Bool { (a.due, a.id) < (b.due, b.id) }
        }

        /// A thread to wake and whether to start one, once the lock is released.
        struct Wake {
            var parker: ThreadParker?
            var startsThread = false
        }

        enum Step {
            case run(@Sendable () -> Void, Wake)
            /// Until this monotonic time (µs), or until woken for nil.
            case sleep(until: Int64?)
            case exit
        }

        let maximumThreads: Int
        var heap = Heap<Entry>()
        /// The jobs not yet started, by ticket id; a heap entry whose job is gone (cancelled, or
        /// moved by `runNow`) is skipped.
        var jobs: [UInt64: (due: Int64, body: @Sendable () -> Void)] = [:]
        var nextID: UInt64 = 0
        var threads = 0
        /// Threads not running a job: parked, or about to look at the heap.
        var idle = 0
        var parked = ParkedThreads<ThreadParker>()

        mutating func add(_ body: @escaping @Sendable () -> Void, due: Int64, startsThread: Bool, now: Int64) -> (Ticket, Wake) {
            nextID += 1
            jobs[nextID] = (due, body)
            return (Ticket(id: nextID), insert(Entry(due: due, id: nextID), startsThread: startsThread, now: now))
        }

        mutating func runNow(_ id: UInt64, now: Int64) -> Wake {
            guard let job = jobs[id], job.due > now else { return Wake() }
            jobs[id]?.due = now
            return insert(Entry(due: now, id: id), now: now)
        }

        private mutating func insert(_ entry: Entry, startsThread: Bool = true, now: Int64) -> Wake {
            let isFirst = heap.min.map { entry < $0 } ?? true
            heap.insert(entry)
            var wake = Wake()
            // Every thread is busy in an attempt (which may block for its connect timeout): one
            // more takes this entry, or at least its wait.
            if startsThread && idle == 0 && threads < maximumThreads { wake.startsThread = addThread() }
            // The parked threads wait for the first entry: only a new first one changes that.
            if isFirst { wake.parker = parked.takeForFirstJob(due: entry.due, now: now) }
            return wake
        }

        /// The job to run, or how the thread waits: until the first entry falls due if no other
        /// thread wakes by then; otherwise it is not needed, and exits once it has been idle for
        /// ``idleExit`` (unless woken before).
        mutating func next(for parker: ThreadParker, idleSince: Int64, now: Int64) -> Step {
            if let first = firstLiveEntry() {
                guard first.due <= now else { return wait(parker, firstDue: first.due, idleSince: idleSince, now: now) }
                _ = heap.removeMin()
                idle -= 1
                // Someone must take the next entry, or at least sleep until it is due.
                var wake = Wake()
                if let next = firstLiveEntry() {
                    wake.parker = parked.takeForFirstJob(due: next.due, now: now)
                    if wake.parker == nil && idle == 0 && threads < maximumThreads { wake.startsThread = addThread() }
                }
                return .run(jobs.removeValue(forKey: first.id)!.body, wake)
            }
            return wait(parker, firstDue: nil, idleSince: idleSince, now: now)
        }

        private mutating func wait(_ parker: ThreadParker, firstDue: Int64?, idleSince: Int64, now: Int64) -> Step {
            if let firstDue, !parked.wakes(by: firstDue) { return .sleep(until: parked.park(parker, firstDue: firstDue)) }
            // Another thread sleeps for the waits: this one exits once idle long enough, so that
            // 200 channels waiting to reconnect keep one thread, not every one their attempts used.
            if now - idleSince >= ConnectionWorkers.idleExit {
                idle -= 1
                threads -= 1
                return .exit
            }
            _ = parked.park(parker, firstDue: nil)
            return .sleep(until: idleSince + ConnectionWorkers.idleExit)
        }

        private mutating func addThread() -> Bool {
            threads += 1
            idle += 1
            return true
        }

        /// The heap's first entry whose job still waits at that due time.
        private mutating func firstLiveEntry() -> Entry? {
            while let first = heap.min {
                if let job = jobs[first.id], job.due == first.due { return first }
                _ = heap.removeMin()
            }
            return nil
        }
    }
}
