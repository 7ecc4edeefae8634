import Dispatch
import Synchronization
import XCTest
@testable import LivePush

/// The waits of a live input, without a feed: the producer's wait for the feed's first picture
/// (bounded by the input timeout) and its sleep until a frame slot is due both end at once when
/// the push stops (``FailoverInput/interrupt()``). Limits are upper bounds.
final class LiveInputWaitTests: XCTestCase {
    /// A feed whose reader is never started: nothing arrives.
    private func silentFeed() -> LiveFeed {
        LiveFeed(url: "udp://127.0.0.1:9", name: "silent", opened: nil, size: VideoSize(width: 64, height: 36),
                 frameRate: 25, audio: AudioFormat(sampleRate: 48_000, channels: 2), options: LiveInputOptions(),
                 report: { _ in })
    }

    private func onThread(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        WorkerThread.start(name: "test.live") {
            body()
            done.signal()
        }
        return done
    }

    func testWaitingForTheFirstPictureEndsAtTheTimeout() {
        let feed = silentFeed()
        let start = monotonicMicroseconds()
        feed.awaitFirstPicture(timeout: .milliseconds(200))
        let waited = monotonicMicroseconds() - start
        XCTAssertGreaterThanOrEqual(waited, 200_000)
        XCTAssertLessThan(waited, 10_000_000)
        XCTAssertFalse(feed.status.hasVideo)
    }

    func testStoppingTheFeedEndsTheWaitForTheFirstPicture() {
        let feed = silentFeed()
        let done = onThread { feed.awaitFirstPicture(timeout: .seconds(60)) }
        XCTAssertEqual(done.wait(timeout: .now() + .milliseconds(100)), .timedOut)
        feed.stop()
        XCTAssertEqual(done.wait(timeout: .now() + .seconds(10)), .success)
    }

    func testASlotSleepsUntilItIsDueAndAStopEndsTheSleep() {
        let progress = LiveInputProgress()
        let start = monotonicMicroseconds()
        XCTAssertTrue(progress.sleep(until: start + 50_000))
        XCTAssertGreaterThanOrEqual(monotonicMicroseconds() - start, 50_000)

        let slept = Atomic<Int>(-1)
        let done = onThread { slept.store(progress.sleep(until: monotonicMicroseconds() + 60_000_000) ? 1 : 0, ordering: .sequentiallyConsistent) }
        XCTAssertEqual(done.wait(timeout: .now() + .milliseconds(100)), .timedOut)
        progress.stop()
        XCTAssertEqual(done.wait(timeout: .now() + .seconds(10)), .success)
        XCTAssertEqual(slept.load(ordering: .sequentiallyConsistent), 0, "stopped, not due")
        XCTAssertFalse(progress.sleep(until: monotonicMicroseconds() + 1_000_000), "every later sleep returns at once")
    }

    func testThePositionOnlyMovesForward() {
        let progress = LiveInputProgress()
        progress.didSend(upTo: 40_000)
        progress.didSend(upTo: 20_000)
        XCTAssertEqual(progress.sent, 40_000)
    }
}
