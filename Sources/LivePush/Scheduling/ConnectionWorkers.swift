import HeapModule

/// A few threads for blocking work (librtmp's connect and handshake, libavformat's open, a
/// graceful close, a file read ahead), and the timers that hold the waits between attempts.
///
/// A channel whose server is away spends nearly all its time waiting for its next attempt. A
/// thread per waiting output would only sleep: 200 channels would hold 200 threads. Here a
/// wait is an entry in a heap; one thread sleeps until the first one falls due, and the others
/// exist only while attempts run. At most ``maximumThreads`` attempts run at once; more wait
/// their turn in the heap (an attempt to a dead host can block for its connect timeout, and
/// it blocks only its own turn). A thread that has had nothing to do for ``idleExit`` exits.
final class ConnectionWorkers: @unchecked Sendable {
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

    /// A scheduled job, to run it earlier (``runNow(_:)``) or drop it (``cancel(_:)``).
    struct Ticket: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    private struct Entry: Comparable {
        var due: Int64
        var id: UInt64
        static func < (a: Entry, b: Entry) -> Bool { (a.due, a.id) < (b.due, b.id) }
    }

    static let idleExit: Int64 = 2_000_000

    let maximumThreads: Int
    private let name: String
    private let lock = ConditionLock()
    private var heap = Heap<Entry>()
    /// The jobs not yet started, by ticket id; a heap entry whose job is gone (cancelled, or
    /// moved by `runNow`) is skipped.
    private var jobs: [UInt64: (due: Int64, body: @Sendable () -> Void)] = [:]
    private var nextID: UInt64 = 0
    private var threads = 0
    private var idle = 0
    /// Whether an idle thread sleeps until the first entry falls due (the others sleep until woken).
    private var timedSleeper = false

    init(maximumThreads: Int, name: String = "livepush.conn") {
        self.maximumThreads = max(1, maximumThreads)
        self.name = name
    }

    /// Runs `body` on one of the workers after `delay` (at once for zero).
    ///
    /// `continuing`: a job of this pool submits its own continuation as it returns (a
    /// ``SerialDrain`` giving other queues their turn). It starts no thread: the submitting
    /// thread is about to take the next entry, and a new one would only make the pool grow with
    /// every queue that keeps a job busy.
    @discardableResult
    func run(after delay: Duration = .zero, continuing: Bool = false, _ body: @escaping @Sendable () -> Void) -> Ticket {
        lock.withLock {
            nextID += 1
            let due = monotonicMicroseconds() + max(0, delay.nanoseconds / 1000)
            jobs[nextID] = (due, body)
            insert(Entry(due: due, id: nextID), startsThread: !continuing)
            return Ticket(id: nextID)
        }
    }

    /// Makes a waiting job due now (a stop, or a requested reconnect, cuts the wait short). No
    /// effect once it has started.
    func runNow(_ ticket: Ticket) {
        lock.withLock {
            guard let job = jobs[ticket.id] else { return }
            let now = monotonicMicroseconds()
            guard job.due > now else { return }
            jobs[ticket.id]?.due = now
            insert(Entry(due: now, id: ticket.id))
        }
    }

    /// Drops a job that has not started.
    func cancel(_ ticket: Ticket) {
        lock.withLock { _ = jobs.removeValue(forKey: ticket.id) }
    }

    /// Figures for tests and the thread budget: threads alive, and jobs waiting.
    var figures: (threads: Int, waiting: Int) { lock.withLock { (threads, jobs.count) } }

    /// Called with the lock held.
    private func insert(_ entry: Entry, startsThread: Bool = true) {
        let isFirst = heap.min.map { entry < $0 } ?? true
        heap.insert(entry)
        // Every thread is busy in an attempt (which may block for its connect timeout): one
        // more takes this entry, or at least its wait.
        if startsThread && idle == 0 && threads < maximumThreads { startThread() }
        if isFirst { lock.broadcast() }
    }

    /// Called with the lock held.
    private func startThread() {
        threads += 1
        idle += 1
        WorkerThread.start(name: name) { self.runThread() }
    }

    private func runThread() {
        var idleSince = monotonicMicroseconds()
        while true {
            let job = lock.withLock { () -> (@Sendable () -> Void)? in
                while true {
                    let now = monotonicMicroseconds()
                    if let first = firstLiveEntry() {
                        if first.due <= now {
                            _ = heap.removeMin()
                            idle -= 1
                            // Someone must take the next entry, or at least sleep until it is due.
                            if firstLiveEntry() != nil {
                                if idle > 0 { lock.signal() } else if threads < maximumThreads { startThread() }
                            }
                            return jobs.removeValue(forKey: first.id)?.body
                        }
                        if !timedSleeper {
                            timedSleeper = true
                            lock.wait(timeout: .microseconds(first.due - now))
                            timedSleeper = false
                        } else {
                            lock.wait()
                        }
                        continue
                    }
                    if now - idleSince >= Self.idleExit {
                        idle -= 1
                        threads -= 1
                        return nil
                    }
                    lock.wait(timeout: .microseconds(Self.idleExit - (now - idleSince)))
                }
            }
            guard let job else { return }
            job()
            idleSince = monotonicMicroseconds()
            lock.withLock { idle += 1 }
        }
    }

    /// The heap's first entry whose job still waits at that due time. Called with the lock held.
    private func firstLiveEntry() -> Entry? {
        while let first = heap.min {
            if let job = jobs[first.id], job.due == first.due { return first }
            _ = heap.removeMin()
        }
        return nil
    }
}
