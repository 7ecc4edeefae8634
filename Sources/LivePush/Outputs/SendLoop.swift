import Synchronization

/// A thread that serves the published connections of many outputs: it writes only what a
/// socket takes without blocking (``Publishing``), so that a slow or stalled destination never
/// holds up another one on the same loop. A few loops serve every output in the process,
/// rather than a thread per output that would mostly wait for its next packets.
///
/// An output wakes its loop when its queue has work (the producer batches this: once before
/// it sleeps), when it is stopped, paused or resumed. Besides, the loop comes back to a
/// blocked socket every 5 ms and to every connection every 250 ms (``sweepInterval``), to read
/// what its server sent; a connection that sends reads it at its turns, every 100 ms at most
/// (``PublishingPace/serviceInterval``). Connecting is not done here: it blocks (see
/// `PushOutput+Connecting.swift`).
final class SendLoop: @unchecked Sendable {
    /// One loop per core, two at least, shared by every push in the process.
    static let pool: [SendLoop] = (0..<WorkerThread.onePerCore).map { SendLoop(index: $0) }
    private static let nextIndex = Atomic<Int>(0)

    /// The loop for a new connection: in turn, so that outputs spread over the loops.
    static func next() -> SendLoop {
        pool[nextIndex.wrappingAdd(1, ordering: .relaxed).oldValue % pool.count]
    }

    private static let blockedRetry: Int64 = 5_000
    /// How often every connection gets a turn, work or not: one that sends is read at its
    /// turns anyway, so this only bounds how late an idle (paused) one notices its server. A
    /// sweep is a wake-up of the loop: at 100 ms they were a third of a real-time push's.
    static let sweepInterval: Int64 = 250_000

    private let lock = ConditionLock()
    // Guarded by `lock`.
    private var arriving: [any PublishingTurns] = []
    private var woken: Set<ObjectIdentifier> = []
    private var sleeping = false
    // The loop thread's own.
    private var attached: [ObjectIdentifier: any PublishingTurns] = [:]
    private var blocked: Set<ObjectIdentifier> = []

    /// Its place in ``pool``: which outputs share a loop (``OutputStats/sendLoop``).
    let index: Int

    private init(index: Int) {
        self.index = index
        WorkerThread.start(name: "livepush.send") { self.run() }
    }

    /// Serves `publishing` from now on, until its turn ends the pump.
    func attach(_ publishing: any PublishingTurns) {
        lock.withLockThenBroadcast {
            arriving.append(publishing)
            woken.insert(ObjectIdentifier(publishing.output))
            return sleeping
        }
    }

    /// The output has work (or a command): its connection gets a turn soon.
    func wake(_ output: PushOutput) {
        lock.withLockThenBroadcast {
            woken.insert(ObjectIdentifier(output))
            return sleeping
        }
    }

    private func run() {
        var nextSweep = monotonicMicroseconds() + Self.sweepInterval
        while true {
            let (arrived, due) = waitForWork(until: blocked.isEmpty ? nextSweep : min(nextSweep, monotonicMicroseconds() + Self.blockedRetry))
            for publishing in arrived { attached[ObjectIdentifier(publishing.output)] = publishing }
            let now = monotonicMicroseconds()
            var turns = due.union(blocked)
            if now >= nextSweep {
                turns.formUnion(attached.keys)
                nextSweep = now + Self.sweepInterval
            }
            var yielded: Set<ObjectIdentifier> = []
            for id in turns {
                guard let publishing = attached[id] else { continue }
                switch publishing.runTurn(now: now) {
                case .idle:
                    blocked.remove(id)
                case .blocked:
                    blocked.insert(id)
                case .yielded:
                    blocked.remove(id)
                    yielded.insert(id)
                case .ended(let outcome):
                    attached[id] = nil
                    blocked.remove(id)
                    publishing.output.pumpEnded(outcome, publishing)
                }
            }
            if !yielded.isEmpty { lock.withLock { woken.formUnion(yielded) } }
        }
    }

    /// Waits until an output wakes the loop or `deadline` (monotonic µs) passes; takes what arrived.
    private func waitForWork(until deadline: Int64) -> ([any PublishingTurns], Set<ObjectIdentifier>) {
        lock.withLock {
            while arriving.isEmpty && woken.isEmpty {
                let left = deadline - monotonicMicroseconds()
                if left <= 0 { break }
                sleeping = true
                lock.wait(timeout: .microseconds(left))
                sleeping = false
            }
            defer {
                arriving.removeAll()
                woken.removeAll()
            }
            return (arriving, woken)
        }
    }
}
