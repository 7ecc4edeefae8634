import Dispatch
import XCTest
@testable import LivePush

/// What an HLS input's demuxer reads: the queued segments end to end, up to one that starts
/// afresh (left for the next demuxer), each segment's cues found by the position of its first
/// packet, and a wait for the next segment that ends, bounded, with the fetcher's last problem.
final class HLSByteSourceTests: XCTestCase {
    private func segment(_ sequence: Int, _ bytes: [UInt8], boundary: Bool = false, cues: [[UInt8]] = []) -> HLSFetchedSegment {
        HLSFetchedSegment(sequence: sequence, bytes: bytes, duration: 1_000_000, boundary: boundary, cues: cues)
    }

    private func readAll(_ source: HLSByteSource, chunk: Int = 3) -> [UInt8] {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: chunk)
        while true {
            let count = buffer.withUnsafeMutableBytes { source.read(into: $0) }
            if count == 0 { return out }
            out += buffer[..<count]
        }
    }

    private let clock = SystemMonotonicClock()

    func testSegmentsEndToEndUntilOneThatStartsAfresh() {
        let queue = HLSSegmentQueue(capacity: 8)
        queue.targetMicros = 10_000
        let far = clock.now().microseconds + 1_000_000
        XCTAssertTrue(queue.push(segment(0, [1, 2, 3, 4], boundary: true), waitingUntil: far, clock: clock))
        XCTAssertTrue(queue.push(segment(1, [5, 6], cues: [[0xAA]]), waitingUntil: far, clock: clock))
        XCTAssertTrue(queue.push(segment(2, [7, 8, 9], boundary: true, cues: [[0xBB]]), waitingUntil: far, clock: clock))
        let first = HLSByteSource(queue: queue, name: "test", minimumWait: .milliseconds(200))
        XCTAssertEqual(readAll(first), [1, 2, 3, 4, 5, 6])
        XCTAssertTrue(first.endedAtBoundary)
        XCTAssertNil(first.failure)
        XCTAssertEqual(first.cues(atPacket: 0, time: 0), [], "segment 0 has none")
        XCTAssertEqual(first.cues(atPacket: 3, time: 10), [], "a packet still in segment 0")
        XCTAssertEqual(first.cues(atPacket: 4, time: 20), [[0xAA]], "the first packet of segment 1")
        XCTAssertEqual(first.cues(atPacket: 5, time: 30), [], "once")
        // The next demuxer starts with the segment left over.
        let second = HLSByteSource(queue: queue, name: "test", minimumWait: .milliseconds(200))
        XCTAssertEqual(readAll(second), [7, 8, 9])
        XCTAssertFalse(second.endedAtBoundary)
        XCTAssertEqual(second.cues(atPacket: 0, time: 40), [[0xBB]])
    }

    func testAWaitForTheNextSegmentEndsWithTheFetchersLastProblem() {
        let queue = HLSSegmentQueue()
        queue.targetMicros = 10_000
        queue.problem = LivePushError(.mediaReadFailed, "http://origin/live.m3u8: HTTP 404 Not Found")
        let source = HLSByteSource(queue: queue, name: "http://origin/live.m3u8", minimumWait: .milliseconds(100))
        let started = ContinuousClock.now
        XCTAssertEqual(readAll(source), [])
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(2), "bounded")
        XCTAssertEqual(source.failure?.code, .mediaReadFailed)
        XCTAssertTrue(source.failure?.message.contains("HTTP 404") ?? false, "\(String(describing: source.failure))")
    }

    func testAStopEndsTheWaitAtOnce() {
        let queue = HLSSegmentQueue()
        let source = HLSByteSource(queue: queue, name: "test", minimumWait: .seconds(30))
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { queue.stop() }
        let started = ContinuousClock.now
        XCTAssertEqual(readAll(source), [])
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5))
        XCTAssertNil(source.failure, "a stop is no failure")
    }

    func testAFullQueueMakesTheFetcherWaitAndRefusesPastTheDeadline() {
        let queue = HLSSegmentQueue(capacity: 1)
        XCTAssertTrue(queue.push(segment(0, [1]), waitingUntil: clock.now().microseconds, clock: clock))
        XCTAssertFalse(queue.push(segment(1, [2]), waitingUntil: clock.now().microseconds + 50_000, clock: clock))
        XCTAssertEqual(queue.take(timeout: .zero)?.sequence, 0)
        XCTAssertTrue(queue.push(segment(1, [2]), waitingUntil: clock.now().microseconds, clock: clock))
    }
}
