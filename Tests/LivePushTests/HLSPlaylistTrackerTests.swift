import XCTest
@testable import LivePush

/// Which segments an HLS input takes from each load, when it loads again, and how it reads a
/// gap and an origin that restarted (RFC 8216 §6.3.3, §6.3.4).
final class HLSPlaylistTrackerTests: XCTestCase {
    private let s: Int64 = 1_000_000

    /// A live window of `count` segments from `first`, named `prefix` and their number.
    private func window(_ first: Int, _ count: Int, prefix: String = "a", target: Int = 1, ended: Bool = false) -> HLSPlaylist {
        var playlist = HLSPlaylist(targetDuration: target, mediaSequence: first, ended: ended)
        playlist.segments = (first..<first + count).map { HLSSegment(sequence: $0, uri: "\(prefix)\($0).ts", duration: Double(target)) }
        return playlist
    }

    func testALiveWindowStartsAtItsSecondToLastSegmentAndTakesEachNewOneOnce() {
        var tracker = HLSPlaylistTracker()
        var update = tracker.update(window(0, 5), loadBegan: 0)
        XCTAssertEqual(update.segments.map(\.sequence), [3, 4])
        XCTAssertTrue(update.changed)
        XCTAssertEqual(update.reloadAt, s, "one target duration after the load began")
        update = tracker.update(window(1, 5), loadBegan: s)
        XCTAssertEqual(update.segments.map(\.sequence), [5])
        XCTAssertFalse(update.gap || update.restarted)
        // The same playlist again: nothing new, and the next load after half a target duration.
        update = tracker.update(window(1, 5), loadBegan: 2 * s)
        XCTAssertEqual(update.segments, [])
        XCTAssertFalse(update.changed)
        XCTAssertEqual(update.reloadAt, 2 * s + s / 2)
        XCTAssertEqual(tracker.next, 6)
    }

    func testAShortWindowStartsAtItsFirstSegmentAndAVODPlaylistAtItsStart() {
        var tracker = HLSPlaylistTracker()
        XCTAssertEqual(tracker.update(window(0, 1), loadBegan: 0).segments.map(\.sequence), [0])
        XCTAssertEqual(tracker.update(window(0, 2), loadBegan: s).segments.map(\.sequence), [1])
        var vod = HLSPlaylistTracker()
        let update = vod.update(window(0, 4, target: 2, ended: true), loadBegan: 0)
        XCTAssertEqual(update.segments.map(\.sequence), [0, 1, 2, 3])
        XCTAssertNil(update.reloadAt, "an ended playlist is not loaded again")
    }

    func testAWindowThatSlidPastTheNextSegmentIsAGapAtTheLiveStart() {
        var tracker = HLSPlaylistTracker()
        _ = tracker.update(window(0, 3), loadBegan: 0)
        let update = tracker.update(window(10, 3), loadBegan: 10 * s)
        XCTAssertTrue(update.gap)
        XCTAssertEqual(update.segments.map(\.sequence), [11, 12])
        XCTAssertTrue(update.segments[0].discontinuity, "the first one starts afresh")
    }

    func testAnOriginThatRestartsFromSequenceZeroIsARestart() {
        var tracker = HLSPlaylistTracker()
        _ = tracker.update(window(15, 5), loadBegan: 0)
        _ = tracker.update(window(16, 5), loadBegan: s)
        // The origin stalls: the same playlist, several times.
        for i in 2..<10 { XCTAssertEqual(tracker.update(window(16, 5), loadBegan: Int64(i) * s).segments, []) }
        // It comes back with a fresh playlist: sequence 0, one segment.
        var update = tracker.update(window(0, 1, prefix: "b"), loadBegan: 12 * s)
        XCTAssertTrue(update.restarted)
        XCTAssertEqual(update.segments.map(\.uri), ["b0.ts"])
        XCTAssertTrue(update.segments[0].discontinuity)
        update = tracker.update(window(0, 2, prefix: "b"), loadBegan: 13 * s)
        XCTAssertFalse(update.restarted, "once is enough")
        XCTAssertEqual(update.segments.map(\.uri), ["b1.ts"])
    }

    func testARestartAnnouncedByAnEmptyPlaylistThenItsFirstSegment() {
        var tracker = HLSPlaylistTracker()
        _ = tracker.update(window(20, 3), loadBegan: 0)
        var update = tracker.update(window(0, 0, prefix: "b"), loadBegan: s)
        XCTAssertTrue(update.restarted)
        XCTAssertEqual(update.segments, [])
        update = tracker.update(window(0, 1, prefix: "b"), loadBegan: 2 * s)
        XCTAssertFalse(update.restarted)
        XCTAssertEqual(update.segments.map(\.uri), ["b0.ts"])
    }

    func testTheSameNumberUnderAnotherURIIsARestart() {
        var tracker = HLSPlaylistTracker()
        _ = tracker.update(window(3, 3), loadBegan: 0)
        let update = tracker.update(window(3, 4, prefix: "c"), loadBegan: s)
        XCTAssertTrue(update.restarted)
        XCTAssertEqual(update.segments.map(\.uri), ["c5.ts", "c6.ts"])
    }
}
