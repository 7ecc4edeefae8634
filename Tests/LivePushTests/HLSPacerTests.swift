import XCTest
@testable import LivePush

/// The pace at which an HLS input hands its pictures over: one target duration behind the
/// first, on their media time, seamless across a boundary, and started again after a stall.
final class HLSPacerTests: XCTestCase {
    private let ms: Int64 = 1000
    private let frame: Int64 = 40_000

    func testPicturesFollowTheirMediaTimeOneTargetDurationLate() {
        var pacer = HLSPacer(startDelay: 1_000 * ms, lead: 300 * ms)
        // A whole segment decoded at once, at 10 s: each picture at its own time.
        let due = (0..<25).map { pacer.releaseTime(media: 5_000 * ms + Int64($0) * frame, now: 10_000 * ms, frameDuration: frame) }
        XCTAssertEqual(due.first, 11_000 * ms, "1 s late: the output starts on it")
        XCTAssertEqual(due[1], 11_040 * ms - 300 * ms, "the others 300 ms ahead of their slots")
        XCTAssertEqual(due.last, 10_700 * ms + 24 * frame)
        // The next segment, decoded a second later, goes on where it left off.
        XCTAssertEqual(pacer.releaseTime(media: 6_000 * ms, now: 11_000 * ms, frameDuration: frame), 11_700 * ms)
        XCTAssertEqual(pacer.restarts, 0)
    }

    func testABoundaryGoesOnFromTheLastPictureWhateverItsTimestamp() {
        var pacer = HLSPacer(startDelay: 1_000 * ms, lead: 0)
        _ = pacer.releaseTime(media: 0, now: 0, frameDuration: frame)
        XCTAssertEqual(pacer.releaseTime(media: 960 * ms, now: 100 * ms, frameDuration: frame), 1_960 * ms)
        pacer.boundary()
        // The origin's new encoder starts its timestamps at 90 s.
        XCTAssertEqual(pacer.releaseTime(media: 90_000 * ms, now: 200 * ms, frameDuration: frame), 2_000 * ms)
        XCTAssertEqual(pacer.releaseTime(media: 90_040 * ms, now: 200 * ms, frameDuration: frame), 2_040 * ms)
        XCTAssertEqual(pacer.restarts, 0)
    }

    func testALateSegmentRefillsTheBufferAndAJumpAheadStartsFromNow() {
        var pacer = HLSPacer(startDelay: 1_000 * ms, lead: 300 * ms)
        _ = pacer.releaseTime(media: 0, now: 0, frameDuration: frame)
        // Due at 2 s, decoded at 2.5 s: late by more than the lead.
        XCTAssertEqual(pacer.releaseTime(media: 1_000 * ms, now: 2_500 * ms, frameDuration: frame), 3_500 * ms)
        XCTAssertEqual(pacer.restarts, 1)
        // Late by less than the lead: handed over at once (its slot is still ahead).
        XCTAssertEqual(pacer.releaseTime(media: 2_000 * ms, now: 4_600 * ms, frameDuration: frame), 4_200 * ms)
        // A timestamp 10 s ahead of the pace: from now.
        XCTAssertEqual(pacer.releaseTime(media: 12_000 * ms, now: 4_600 * ms, frameDuration: frame), 4_600 * ms)
        XCTAssertEqual(pacer.restarts, 2)
        pacer.reset()
        XCTAssertEqual(pacer.releaseTime(media: 50 * ms, now: 9_000 * ms, frameDuration: frame), 10_000 * ms)
    }
}
