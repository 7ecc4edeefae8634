import Dispatch
import Synchronization
import XCTest
@testable import LivePush

/// A queue's work as jobs on a shared pool: one job at a time, only while there is work, none
/// lost to an offer that comes while a job is ending (``DrainSchedule``, ``SerialDrain``), and
/// the wait of a thread that must wait for another's progress (``ProgressSignal``).
final class SerialDrainTests: XCTestCase {
    // MARK: - DrainSchedule (pure)

    func testAnOfferToAnIdleQueueSchedulesOneJobAndFurtherOffersJoinIt() {
        var schedule = DrainSchedule()
        XCTAssertTrue(schedule.offer())
        XCTAssertFalse(schedule.offer(), "a job is scheduled: it will see this work")
        XCTAssertEqual(schedule.state, .scheduled)
        schedule.start()
        XCTAssertEqual(schedule.state, .running(offeredSince: false))
        XCTAssertFalse(schedule.end(.drained))
        XCTAssertEqual(schedule.state, .idle, "no work, no job")
    }

    func testAnOfferWhileAJobRunsMakesItRunAgain() {
        var schedule = DrainSchedule()
        _ = schedule.offer()
        schedule.start()
        // The job may already have found the queue empty when this work came.
        XCTAssertFalse(schedule.offer(), "not a second job beside the running one")
        XCTAssertTrue(schedule.end(.drained), "it runs again, so the work is not left waiting")
        XCTAssertEqual(schedule.state, .scheduled)
        schedule.start()
        XCTAssertFalse(schedule.end(.drained))
        XCTAssertEqual(schedule.state, .idle)
    }

    func testAJobThatStoppedWithWorkLeftIsScheduledAgain() {
        var schedule = DrainSchedule()
        _ = schedule.offer()
        schedule.start()
        XCTAssertTrue(schedule.end(.more))
        XCTAssertEqual(schedule.state, .scheduled)
        XCTAssertFalse(schedule.offer())
    }

    // MARK: - SerialDrain on a pool

    /// Many threads offer work to a few queues on a pool of two threads: every item is taken,
    /// turns of one queue never overlap, and once drained no job is left.
    func testEveryOfferedItemIsDrainedByTurnsThatNeverOverlap() {
        let workers = ConnectionWorkers(maximumThreads: 2, name: "livepush.test")
        final class Queue: Sendable {
            let drain: SerialDrain
            let items = Mutex<[Int]>([])
            let taken = Mutex<[Int]>([])
            let inTurn = Atomic<Int>(0)
            let overlaps = Atomic<Int>(0)
            init(_ workers: ConnectionWorkers) { drain = SerialDrain(on: workers) }

            func add(_ item: Int) {
                items.withLock { $0.append(item) }
                drain.offer { self.turn() }
            }

            func turn() -> DrainSchedule.Turn {
                if inTurn.add(1, ordering: .sequentiallyConsistent).newValue > 1 {
                    overlaps.add(1, ordering: .relaxed)
                }
                defer { inTurn.subtract(1, ordering: .sequentiallyConsistent) }
                // At most three items a turn, so that turns also end with work left.
                let batch = items.withLock { items -> [Int] in
                    let batch = Array(items.prefix(3))
                    items.removeFirst(batch.count)
                    return batch
                }
                taken.withLock { $0 += batch }
                return items.withLock { $0.isEmpty } ? .drained : .more
            }
        }
        let queues = (0..<3).map { _ in Queue(workers) }
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for n in 0..<500 { queues[n % 3].add(thread * 1000 + n) }
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while queues.contains(where: { !$0.drain.isIdle }) && ContinuousClock.now < deadline { usleep(1_000) }
        for queue in queues {
            XCTAssertTrue(queue.drain.isIdle)
            XCTAssertEqual(queue.overlaps.load(ordering: .relaxed), 0, "turns of one queue overlapped")
        }
        let all = queues.flatMap { $0.taken.withLock { $0 } }.sorted()
        XCTAssertEqual(all, (0..<4).flatMap { thread in (0..<500).map { thread * 1000 + $0 } }.sorted())
        XCTAssertLessThanOrEqual(workers.figures.threads, 2)
    }

    /// A queue whose turns keep ending with work left goes to the back of the pool's line each
    /// time, from the thread that ran it: that thread takes it again, and the pool does not grow.
    func testAQueueThatKeepsAJobBusyHoldsOneThread() {
        let workers = ConnectionWorkers(maximumThreads: 4, name: "livepush.test")
        let drain = SerialDrain(on: workers)
        let turnsLeft = Mutex(50)
        drain.offer {
            turnsLeft.withLock { left in
                left -= 1
                return left > 0 ? .more : .drained
            }
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while !drain.isIdle && ContinuousClock.now < deadline { usleep(1_000) }
        XCTAssertEqual(turnsLeft.withLock { $0 }, 0)
        XCTAssertEqual(workers.figures.threads, 1, "50 turns, one after the other, on one thread")
    }

    // MARK: - ProgressSignal

    func testAWaitEndsWhenAnotherThreadMakesProgress() {
        let signal = ProgressSignal()
        let done = Mutex(false)
        let started = ContinuousClock.now
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) {
            done.withLock { $0 = true }
            signal.wake()
        }
        XCTAssertTrue(signal.wait(limit: .seconds(10)) { done.withLock { $0 } })
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5))
    }

    func testAWaitForProgressThatNeverComesEndsAtItsLimit() {
        let signal = ProgressSignal()
        let started = ContinuousClock.now
        XCTAssertFalse(signal.wait(limit: .milliseconds(100)) { false })
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, .milliseconds(100))
        // A wake with nobody waiting leaves nothing behind that ends the next wait early.
        signal.wake()
        XCTAssertFalse(signal.wait(limit: .milliseconds(50)) { false })
    }

    /// A producer waits for room 1000 times while a consumer makes it: no wake-up is lost.
    func testNoWakeUpIsLostBetweenAWaiterAndAWaker() {
        let signal = ProgressSignal()
        let room = Mutex(0)
        DispatchQueue.global().async {
            for _ in 0..<1000 {
                room.withLock { $0 += 1 }
                signal.wake()
                while room.withLock({ $0 }) > 0 { sched_yield() }
            }
        }
        for n in 0..<1000 {
            XCTAssertTrue(signal.wait(limit: .seconds(10)) { room.withLock { $0 } > 0 }, "wait \(n) was not woken")
            room.withLock { $0 -= 1 }
        }
    }
}
