import Synchronization
import XCTest
@testable import LivePush

/// The workers that connect and hold the waits between attempts: jobs run once, in order of
/// their due time, a wait can be cut short or dropped, and waiting holds one thread at most.
final class ConnectionWorkersTests: XCTestCase {
    private func wait(until condition: () -> Bool, timeout: Duration = .seconds(10)) {
        let deadline = ContinuousClock.now + timeout
        while !condition() && ContinuousClock.now < deadline { usleep(2_000) }
    }

    func testJobsRunInOrderOfTheirDueTime() {
        let workers = ConnectionWorkers(maximumThreads: 1)
        let order = Mutex<[Int]>([])
        workers.run(after: .milliseconds(300)) { order.withLock { $0.append(3) } }
        workers.run(after: .milliseconds(100)) { order.withLock { $0.append(1) } }
        workers.run(after: .milliseconds(200)) { order.withLock { $0.append(2) } }
        wait { order.withLock { $0.count } == 3 }
        XCTAssertEqual(order.withLock { $0 }, [1, 2, 3])
    }

    func testRunNowCutsTheWaitShortAndCancelDropsIt() {
        let workers = ConnectionWorkers(maximumThreads: 2)
        let ran = Mutex<[String]>([])
        let started = ContinuousClock.now
        let late = workers.run(after: .seconds(60)) { ran.withLock { $0.append("cut short") } }
        let dropped = workers.run(after: .milliseconds(50)) { ran.withLock { $0.append("dropped") } }
        workers.cancel(dropped)
        workers.runNow(late)
        wait { ran.withLock { !$0.isEmpty } }
        XCTAssertEqual(ran.withLock { $0 }, ["cut short"])
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(30))
        usleep(200_000)
        XCTAssertEqual(ran.withLock { $0 }, ["cut short"], "a cancelled job never runs")
    }

    func testManyWaitsHoldOneThreadAndBlockingJobsAreCapped() {
        let workers = ConnectionWorkers(maximumThreads: 4)
        for _ in 0..<200 { workers.run(after: .seconds(60)) {} }
        wait { workers.figures.threads == 1 }
        XCTAssertEqual(workers.figures.threads, 1, "200 waits, one thread sleeping until the first")
        XCTAssertEqual(workers.figures.waiting, 200)

        // Blocking jobs (a connect to a dead host) run at most four at a time.
        let running = Mutex((now: 0, most: 0, done: 0))
        for _ in 0..<12 {
            workers.run {
                running.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
                usleep(50_000)
                running.withLock { $0.now -= 1; $0.done += 1 }
            }
        }
        wait { running.withLock { $0.done } == 12 }
        XCTAssertEqual(running.withLock { $0.done }, 12)
        XCTAssertLessThanOrEqual(running.withLock { $0.most }, 4)
        XCTAssertLessThanOrEqual(workers.figures.threads, 4)

        // Once idle for 2 s, the threads the jobs used exit; one stays asleep for the 200 waits.
        wait { workers.figures.threads == 1 }
        XCTAssertEqual(workers.figures.threads, 1)
        XCTAssertEqual(workers.figures.waiting, 200)
    }
}
