import XCTest
@testable import LivePush

/// The pacing threads' decisions, without threads: which thread runs a job, which one wakes,
/// and how long a thread sleeps. Times are monotonic µs; threads are stand-ins.
final class PacingQueueTests: XCTestCase {
    private final class Thread {}
    private final class Job: ScheduledJob {
        func run() -> ScheduledRun { .finished }
        func passOnWork() {}
    }

    private let window = CoalescingWindow(length: 5_000)

    func testARequeuedJobWakesNobodyAndItsThreadSleepsUntilItIsDue() {
        var queue = PacingQueue<Thread>()
        let job = Job()
        let thread = Thread()
        var window = window
        XCTAssertNil(queue.add(job, now: 0), "nobody is parked")
        XCTAssertTrue(queue.takeDueJob(&window, now: 0).job === job)
        XCTAssertNil(queue.endTurn(of: job, .at(100_000), now: 1_000), "the thread looks again before it parks")
        XCTAssertNil(queue.takeDueJob(&window, now: 1_000).job)
        XCTAssertEqual(queue.park(thread, window: window, now: 1_000), .sleep(until: 100_000))
        XCTAssertTrue(queue.takeDueJob(&window, now: 100_050).job === job)
    }

    func testAThreadThatQueuedAnEarlierJobTakesTheDeadlineOver() {
        var queue = PacingQueue<Thread>()
        let (early, late) = (Job(), Job())
        let (first, second) = (Thread(), Thread())
        var window = window
        _ = queue.add(late, now: 0)
        _ = queue.add(early, now: 0)
        XCTAssertTrue(queue.takeDueJob(&window, now: 0).job === late)
        XCTAssertNil(queue.endTurn(of: late, .at(200_000), now: 0))
        var otherWindow = self.window
        XCTAssertTrue(queue.takeDueJob(&otherWindow, now: 0).job === early)
        // The first thread parks until the late job; the second queues the early one before it.
        XCTAssertNil(queue.takeDueJob(&window, now: 6_000).job)
        XCTAssertEqual(queue.park(first, window: window, now: 6_000), .sleep(until: 200_000))
        XCTAssertNil(queue.endTurn(of: early, .at(100_000), now: 7_000))
        XCTAssertNil(queue.takeDueJob(&otherWindow, now: 7_000).job)
        XCTAssertEqual(queue.park(second, window: otherWindow, now: 7_000), .sleep(until: 100_000),
                       "a thread sleeping until the late job would run the early one 100 ms late")
        XCTAssertTrue(queue.parked.deadlineSleeper?.parker === second)
        XCTAssertTrue(queue.leave(first), "its timer still runs: it wakes at 200 ms and leaves on its own")
    }

    func testAJobWokenNowWakesAnIdleThreadBeforeTheDeadlineSleeper() {
        var queue = PacingQueue<Thread>()
        let (paced, woken) = (Job(), Job())
        let (timed, idle) = (Thread(), Thread())
        var window = window
        _ = queue.add(paced, now: 0)
        _ = queue.add(woken, now: 0)
        XCTAssertTrue(queue.takeDueJob(&window, now: 0).job === paced)
        XCTAssertNil(queue.endTurn(of: paced, .at(100_000), now: 0))
        XCTAssertTrue(queue.takeDueJob(&window, now: 0).job === woken)
        XCTAssertNil(queue.endTurn(of: woken, .whenWoken, now: 0))
        XCTAssertEqual(queue.park(timed, window: CoalescingWindow(length: 5_000), now: 10_000), .sleep(until: 100_000))
        XCTAssertEqual(queue.park(idle, window: CoalescingWindow(length: 5_000), now: 10_000), .sleep(until: nil))
        XCTAssertTrue(queue.wake(woken, now: 20_000) === idle, "the deadline sleeper keeps its deadline")
        XCTAssertFalse(queue.leave(idle), "taken: its wake-up is on the way")
        var idleWindow = CoalescingWindow(length: 5_000)
        XCTAssertTrue(queue.takeDueJob(&idleWindow, now: 20_000).job === woken)
        XCTAssertTrue(queue.wake(paced, now: 30_000) === timed, "nobody else is parked")
        XCTAssertNil(queue.parked.deadlineSleeper)
    }

    func testMoreWorkDueWithinTheWindowWakesAnIdleThreadNotTheDeadlineSleeper() {
        var queue = PacingQueue<Thread>()
        let (a, b, c) = (Job(), Job(), Job())
        let (timed, idle) = (Thread(), Thread())
        _ = queue.add(a, now: 0)
        _ = queue.add(b, now: 0)
        _ = queue.add(c, now: 0)
        XCTAssertEqual(queue.park(timed, window: CoalescingWindow(length: 5_000), now: -10_000), .sleep(until: 0))
        XCTAssertEqual(queue.park(idle, window: CoalescingWindow(length: 5_000), now: -10_000), .sleep(until: nil))
        var window = window
        var (job, helper) = queue.takeDueJob(&window, now: 0)
        XCTAssertTrue(job === a)
        XCTAssertTrue(helper === idle, "b is due: the idle thread helps")
        (job, helper) = queue.takeDueJob(&window, now: 100)
        XCTAssertTrue(job === b)
        XCTAssertNil(helper, "the deadline sleeper wakes for c anyway")
        XCTAssertTrue(queue.leave(timed))
        XCTAssertEqual(queue.park(Thread(), window: CoalescingWindow(length: 5_000), now: 200), .lookAgain, "c is due")
    }

    func testAJobDueLaterInTheWindowWaitsForTheRunningThreadUntilItIsOverdue() {
        var queue = PacingQueue<Thread>()
        let (first, second) = (Job(), Job())
        let (timed, idle) = (Thread(), Thread())
        var window = window
        _ = queue.add(first, now: 0)
        _ = queue.add(second, now: 0)
        XCTAssertTrue(queue.takeDueJob(&window, now: 0).job === first)
        XCTAssertNil(queue.endTurn(of: first, .at(10_000), now: 0))
        XCTAssertTrue(queue.takeDueJob(&window, now: 0).job === second)
        XCTAssertNil(queue.endTurn(of: second, .at(12_000), now: 0))
        XCTAssertEqual(queue.park(timed, window: CoalescingWindow(length: 5_000), now: 1_000), .sleep(until: 10_000))
        XCTAssertEqual(queue.park(idle, window: CoalescingWindow(length: 5_000), now: 1_000), .sleep(until: nil))
        window = self.window
        var (job, helper) = queue.takeDueJob(&window, now: 10_000)
        XCTAssertTrue(job === first)
        XCTAssertNil(helper, "the second job is due in 2 ms: this thread runs it, early if it is back first")
        XCTAssertNil(queue.endTurn(of: first, .at(50_000), now: 10_500))
        // The first turn took longer: the second job is overdue when this thread looks again.
        _ = queue.add(first, now: 12_500)
        (job, helper) = queue.takeDueJob(&window, now: 12_500)
        XCTAssertTrue(job === second)
        XCTAssertTrue(helper === idle, "the woken job is overdue: the idle thread helps")
    }

    func testABacklogWakesTheThreadSleepingUntilALaterDeadline() {
        var queue = PacingQueue<Thread>()
        let (late, requeued, added) = (Job(), Job(), Job())
        let sleeper = Thread()
        var window = window
        _ = queue.add(late, now: 0)
        _ = queue.add(requeued, now: 0)
        XCTAssertTrue(queue.takeDueJob(&window, now: 0).job === late)
        XCTAssertNil(queue.endTurn(of: late, .at(50_000), now: 0))
        XCTAssertTrue(queue.takeDueJob(&window, now: 0).job === requeued)
        XCTAssertEqual(queue.park(sleeper, window: CoalescingWindow(length: 5_000), now: 1_000), .sleep(until: 50_000))
        // The running thread queues its job for before that deadline, and falls behind.
        XCTAssertNil(queue.endTurn(of: requeued, .at(30_000), now: 1_000))
        XCTAssertNil(queue.add(added, now: 35_000), "not the first entry")
        let (job, helper) = queue.takeDueJob(&window, now: 35_000)
        XCTAssertTrue(job === requeued)
        XCTAssertTrue(helper === sleeper, "the added job is overdue: the sleeper helps rather than wait for 50 ms")
    }

    func testAJobWokenWhileItRunsRunsAgainRightAfter() {
        var queue = PacingQueue<Thread>()
        let job = Job()
        let idle = Thread()
        var window = window
        _ = queue.add(job, now: 0)
        XCTAssertTrue(queue.takeDueJob(&window, now: 0).job === job)
        XCTAssertEqual(queue.park(idle, window: CoalescingWindow(length: 5_000), now: 0), .sleep(until: nil))
        XCTAssertNil(queue.wake(job, now: 1_000), "it runs: woken once its turn ends")
        XCTAssertTrue(queue.endTurn(of: job, .at(100_000), now: 2_000) === idle, "due now, not at 100 ms")
        XCTAssertTrue(queue.takeDueJob(&window, now: 2_000).job === job)
        XCTAssertNil(queue.endTurn(of: job, .finished, now: 3_000))
        XCTAssertNil(queue.wake(job, now: 4_000), "a finished job is gone")
    }
}
