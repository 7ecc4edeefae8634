import Dispatch
import Synchronization
import XCTest
@testable import LivePush

/// The hand-over between an app's threads and the producer (``AppFeedQueue``): the caps, the
/// order across the tracks, the refusal after the end, and the waits on both sides, which a
/// change on the other side (a take, a send, a finish) ends. The waits are awaited on
/// semaphores; the limits are upper bounds.
final class AppFeedQueueTests: XCTestCase {
    private struct Item: AppFed {
        var timestamp: Int64
        var cost = 1
    }

    private func queue(video: Int = 2, audio: Int = 4, hasAudio: Bool = true,
                       timestamps: FrameInput.Timestamps = .fromFrames) -> AppFeedQueue<Item, Item> {
        AppFeedQueue(hasVideo: true, hasAudio: hasAudio, timestamps: timestamps, maxVideo: video,
                     maxAudioCost: audio, audioCost: { $0.cost })
    }

    private static func times(_ next: AppFeedQueue<Item, Item>.Next) -> String {
        switch next {
        case .video(let item): "v\(item.timestamp)"
        case .audio(let item): "a\(item.timestamp)"
        case .end: "end"
        }
    }

    /// Runs `body` on a thread of its own; the semaphore is signalled when it returns.
    private func onThread(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        WorkerThread.start(name: "test.feed") {
            body()
            done.signal()
        }
        return done
    }

    func testItemsAreTakenInTimestampOrderAcrossTheTracksThenTheEnd() throws {
        let feed = queue(video: 4)
        try feed.send(video: Item(timestamp: 0))
        try feed.send(audio: Item(timestamp: 10))
        try feed.send(video: Item(timestamp: 40))
        try feed.send(audio: Item(timestamp: 30))
        XCTAssertEqual(Self.times(feed.take()), "v0")
        XCTAssertEqual(Self.times(feed.take()), "a10")
        XCTAssertEqual(Self.times(feed.take()), "a30")
        feed.finish()
        // Finished: what is queued still goes, then the end, again and again.
        XCTAssertEqual(Self.times(feed.take()), "v40")
        XCTAssertEqual(Self.times(feed.take()), "end")
        XCTAssertEqual(Self.times(feed.take()), "end")
    }

    func testAfterTheEndAndOnAMissingTrackSendIsRefused() {
        let feed = queue(hasAudio: false)
        XCTAssertThrowsError(try feed.send(audio: Item(timestamp: 0))) {
            XCTAssertEqual(($0 as? LivePushError)?.code, .invalidState)
        }
        feed.finish()
        XCTAssertThrowsError(try feed.send(video: Item(timestamp: 0))) {
            XCTAssertEqual(($0 as? LivePushError)?.code, .invalidState)
        }
    }

    func testAFullTrackHoldsItsSenderUntilTheProducerTakes() throws {
        let feed = queue(video: 2, hasAudio: false)
        try feed.send(video: Item(timestamp: 0))
        try feed.send(video: Item(timestamp: 1))
        let sent = Atomic<Bool>(false)
        let done = onThread {
            // The cap is two pictures: this one waits for room.
            try? feed.send(video: Item(timestamp: 2))  // the test checks the take it waited for, not the throw
            sent.store(true, ordering: .sequentiallyConsistent)
        }
        // Nothing takes: the sender stays held (a busy machine can only make this pass).
        XCTAssertEqual(done.wait(timeout: .now() + .milliseconds(200)), .timedOut)
        XCTAssertFalse(sent.load(ordering: .sequentiallyConsistent))
        XCTAssertEqual(Self.times(feed.take()), "v0")
        XCTAssertEqual(done.wait(timeout: .now() + .seconds(10)), .success, "the take made room")
        XCTAssertEqual(Self.times(feed.take()), "v1")
        XCTAssertEqual(Self.times(feed.take()), "v2")
    }

    func testTheAudioCapCountsTheCostNotTheFrames() throws {
        let feed = queue(video: 10, audio: 4)
        try feed.send(audio: Item(timestamp: 0, cost: 3))
        try feed.send(audio: Item(timestamp: 1, cost: 3))  // 3 < 4 queued: taken in, now 6
        let done = onThread { try? feed.send(audio: Item(timestamp: 2, cost: 1)) }  // the wait is what is checked
        XCTAssertEqual(done.wait(timeout: .now() + .milliseconds(200)), .timedOut, "6 of 4 queued: the sender waits")
        try feed.send(video: Item(timestamp: 5))
        XCTAssertEqual(Self.times(feed.take()), "a0")  // 3 left: room
        XCTAssertEqual(done.wait(timeout: .now() + .seconds(10)), .success)
    }

    func testTheProducerWaitsUntilEveryTrackHasAnItemOrTheInputEnds() throws {
        let feed = queue()
        let taken = Mutex<[String]>([])
        let done = onThread {
            let first = Self.times(feed.take())
            taken.withLock { $0.append(first) }
        }
        try feed.send(video: Item(timestamp: 0))
        // Video alone: the audio track might still bring something earlier.
        XCTAssertEqual(done.wait(timeout: .now() + .milliseconds(200)), .timedOut)
        try feed.send(audio: Item(timestamp: 5))
        XCTAssertEqual(done.wait(timeout: .now() + .seconds(10)), .success, "the send woke the producer")
        XCTAssertEqual(taken.withLock { $0 }, ["v0"])
    }

    func testFinishingReleasesAWaitingProducerAndAWaitingSender() throws {
        let feed = queue(video: 1, hasAudio: false)
        let taker = queue(hasAudio: false)
        let ended = Mutex<String?>(nil)
        let producer = onThread { ended.withLock { $0 = Self.times(taker.take()) } }
        try feed.send(video: Item(timestamp: 0))
        let refused = Mutex<LivePushError.Code?>(nil)
        let sender = onThread {
            do throws(LivePushError) {
                try feed.send(video: Item(timestamp: 1))
            } catch {
                refused.withLock { $0 = error.code }
            }
        }
        XCTAssertEqual(sender.wait(timeout: .now() + .milliseconds(100)), .timedOut)
        // What `interrupt()` does when the push stops.
        taker.finish()
        feed.finish()
        XCTAssertEqual(producer.wait(timeout: .now() + .seconds(10)), .success)
        XCTAssertEqual(sender.wait(timeout: .now() + .seconds(10)), .success)
        XCTAssertEqual(ended.withLock { $0 }, "end")
        XCTAssertEqual(refused.withLock { $0 }, .invalidState)
    }

    func testOnArrivalStampsTheTimeOfSendFromTheFirstItemOfEitherTrack() throws {
        let feed = queue(timestamps: .onArrival)
        let before = monotonicMicroseconds()
        try feed.send(audio: Item(timestamp: 9_999_999))
        try feed.send(video: Item(timestamp: 9_999_999))
        let elapsed = monotonicMicroseconds() - before
        feed.finish()  // else the second take waits for more audio, which might come earlier
        var stamps: [String: Int64] = [:]
        for _ in 0..<2 {
            switch feed.take() {
            case .video(let item): stamps["video"] = item.timestamp
            case .audio(let item): stamps["audio"] = item.timestamp
            case .end: XCTFail("two were queued")
            }
        }
        XCTAssertEqual(stamps["audio"], 0, "the first item of either track is time 0")
        XCTAssert((0...elapsed).contains(stamps["video"] ?? -1), "\(stamps) within \(elapsed) µs")
    }
}
