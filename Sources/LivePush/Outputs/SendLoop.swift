import Synchronization

/// A thread that serves the published connections of many outputs: it writes only what a
/// socket takes without blocking (``Publishing``), so that a slow or stalled destination never
/// holds up another one on the same loop. A few loops serve every output in the process,
/// rather than a thread per output that would mostly wait for its next packets.
///
/// A connection gets a turn when its output wakes the loop: its queue has work (the producer
/// batches this: once before it sleeps), it is stopped, paused or resumed. Besides, each turn
/// says when the connection next needs one without new work (``PublishingTurn``): a blocked
/// write's retry 5 ms on, or the next read of its server (acknowledgements, pings, errors, a
/// close). A connection that sends is read at its turns, every 100 ms at most
/// (``PublishingPace/serviceInterval``); one with nothing to send is due a read 250 ms after
/// its last (``PublishingPace/idleServiceInterval``). The loop keeps these due times in a heap
/// (``DueTimes``) and sleeps until the earliest or until woken, then runs every turn due within
/// the next 5 ms too: there is no sweep of every connection, a connection that sends is never
/// due (its turns read it first), and a loop with no connections sleeps until one arrives.
/// Connecting is not done here: it blocks (see `PushOutput+Connecting.swift`).
final class SendLoop: Sendable {
    /// One loop per core, two at least, shared by every push in the process.
    static let pool: [SendLoop] = (0..<WorkerThread.onePerCore).map { SendLoop(index: $0) }
    private static let nextIndex = Atomic<Int>(0)

    /// The loop for a new connection: in turn, so that outputs spread over the loops.
    static func next() -> SendLoop {
        pool[nextIndex.wrappingAdd(1, ordering: .relaxed).oldValue % pool.count]
    }

    /// Turns due within this long (µs) of the one that woke the loop run in the same wake-up:
    /// idle connections' reads fall due at scattered instants, and a wake-up each would cost
    /// more than the reads (``PacingScheduler/coalescingWindow``). A read or a retry a few
    /// milliseconds early does no harm.
    static let coalescingWindow: Int64 = PacingScheduler.coalescingWindow

    /// What other threads hand the loop: connections to serve, and outputs with work.
    private struct Inbox: ~Copyable {
        var arriving: [PublishingSlot] = []
        var woken: Set<ObjectIdentifier> = []
        var sleeping = false

        var hasWork: Bool { !arriving.isEmpty || !woken.isEmpty }

        /// Hands what arrived over to the loop, swapping buffers with it so that neither side
        /// allocates per wake-up (`arrived` and `woken` come in empty).
        mutating func take(into arrived: inout [PublishingSlot], _ woken: inout Set<ObjectIdentifier>) {
            sleeping = false
            swap(&arriving, &arrived)
            swap(&self.woken, &woken)
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
        // The loop thread's own: the connections it serves and when each is due, and the
        // buffers each wake-up reuses.
        var attached: [ObjectIdentifier: PublishingSlot] = [:]
        var dueTimes = DueTimes<ObjectIdentifier>()
        var arrived: [PublishingSlot] = []
        var woken: Set<ObjectIdentifier> = []
        var turns: [ObjectIdentifier] = []
        while true {
            arrived.removeAll(keepingCapacity: true)
            woken.removeAll(keepingCapacity: true)
            waitForWork(until: dueTimes.earliest, arrived: &arrived, woken: &woken)
            for slot in arrived { attached[ObjectIdentifier(slot.output)] = slot }
            let now = clock.now().microseconds
            turns.removeAll(keepingCapacity: true)
            for id in woken {
                dueTimes.remove(id)
                turns.append(id)
            }
            dueTimes.takeDue(through: now + Self.coalescingWindow, into: &turns)
            for id in turns {
                guard let slot = attached[id] else { continue }
                switch slot.runTurn(now: now) {
                case .idle(let readBy):
                    dueTimes.schedule(id, at: readBy)
                case .blocked(let retryAt):
                    dueTimes.schedule(id, at: retryAt)
                case .yielded:
                    // Due now: its next turn comes after this round's, before the loop sleeps.
                    dueTimes.schedule(id, at: now)
                case .ended(let outcome):
                    attached[id] = nil
                    slot.output.pumpEnded(outcome, slot)
                case nil:
                    // Never: only this loop ends a pump, and it lets go of the slot then.
                    attached[id] = nil
                }
            }
        }
    }

    /// Waits until an output wakes the loop or `deadline` (monotonic µs; nil: none) passes;
    /// takes what arrived.
    private func waitForWork(until deadline: Int64?, arrived: inout [PublishingSlot], woken: inout Set<ObjectIdentifier>) {
        let ready = inbox.withLock { inbox -> Bool in
            if inbox.hasWork { return true }
            // From here on, what wakes the loop rings the bell.
            inbox.sleeping = true
            return false
        }
        if !ready {
            if let deadline {
                // At most a minute: a due time read off a push's own clock may lie far ahead.
                let left = min(deadline - clock.now().microseconds, 60_000_000)
                if left > 0 { bell.wait(limit: .microseconds(left)) { inbox.withLock { $0.hasWork } } }
            } else {
                bell.wait { inbox.withLock { $0.hasWork } }
            }
        }
        inbox.withLock { $0.take(into: &arrived, &woken) }
    }
}
