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
final class SendLoop: Sendable {
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

    /// What other threads hand the loop: connections to serve, and outputs with work.
    private struct Inbox: ~Copyable {
        var arriving: [PublishingSlot] = []
        var woken: Set<ObjectIdentifier> = []
        var sleeping = false

        var hasWork: Bool { !arriving.isEmpty || !woken.isEmpty }

        mutating func take() -> ([PublishingSlot], Set<ObjectIdentifier>) {
            sleeping = false
            defer {
                arriving.removeAll()
                woken.removeAll()
            }
            return (arriving, woken)
        }
    }

    private let inbox = Mutex(Inbox())
    /// Where the loop sleeps until an output wakes it (when `inbox` says it sleeps).
    private let bell = ProgressSignal()

    /// Its place in ``pool``: which outputs share a loop (``OutputStats/sendLoop``).
    let index: Int
    /// The loop serves every push in the process, so it keeps the process's clock rather than
    /// one push's ``PushConfig/monotonicClock``; each turn is handed the time read here.
    private let clock: any MonotonicClock

    private init(index: Int, clock: any MonotonicClock = SystemMonotonicClock()) {
        self.index = index
        self.clock = clock
        WorkerThread.start(name: "livepush.send") { self.run() }
    }

    /// Serves the connection in `slot` from now on, until its turn ends the pump.
    func attach(_ slot: PublishingSlot) {
        let sleeping = inbox.withLock { inbox in
            inbox.arriving.append(slot)
            inbox.woken.insert(ObjectIdentifier(slot.output))
            return inbox.sleeping
        }
        if sleeping { bell.wake() }
    }

    /// The output has work (or a command): its connection gets a turn soon.
    func wake(_ output: PushOutput) {
        let sleeping = inbox.withLock { inbox in
            inbox.woken.insert(ObjectIdentifier(output))
            return inbox.sleeping
        }
        if sleeping { bell.wake() }
    }

    private func run() {
        // The loop thread's own: the connections it serves, and those whose socket was full.
        var attached: [ObjectIdentifier: PublishingSlot] = [:]
        var blocked: Set<ObjectIdentifier> = []
        var nextSweep = clock.now().microseconds + Self.sweepInterval
        while true {
            let (arrived, due) = waitForWork(until: blocked.isEmpty ? nextSweep : min(nextSweep, clock.now().microseconds + Self.blockedRetry))
            for slot in arrived { attached[ObjectIdentifier(slot.output)] = slot }
            let now = clock.now().microseconds
            var turns = due.union(blocked)
            if now >= nextSweep {
                turns.formUnion(attached.keys)
                nextSweep = now + Self.sweepInterval
            }
            var yielded: Set<ObjectIdentifier> = []
            for id in turns {
                guard let slot = attached[id] else { continue }
                switch slot.runTurn(now: now) {
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
                    slot.output.pumpEnded(outcome, slot)
                case nil:
                    // Never: only this loop ends a pump, and it lets go of the slot then.
                    attached[id] = nil
                    blocked.remove(id)
                }
            }
            if !yielded.isEmpty { inbox.withLock { $0.woken.formUnion(yielded) } }
        }
    }

    /// Waits until an output wakes the loop or `deadline` (monotonic µs) passes; takes what arrived.
    private func waitForWork(until deadline: Int64) -> ([PublishingSlot], Set<ObjectIdentifier>) {
        let ready = inbox.withLock { inbox -> ([PublishingSlot], Set<ObjectIdentifier>)? in
            if inbox.hasWork { return inbox.take() }
            // From here on, what wakes the loop rings the bell.
            inbox.sleeping = true
            return nil
        }
        if let ready { return ready }
        let left = deadline - clock.now().microseconds
        if left > 0 { bell.wait(limit: .microseconds(left)) { inbox.withLock { $0.hasWork } } }
        return inbox.withLock { $0.take() }
    }
}
