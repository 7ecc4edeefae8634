@testable import LivePush
import XCTest

/// Where raw sound goes on the push's continuous AAC timeline (``SoundPlacement``).
final class SoundPlacementTests: XCTestCase {
    func testBlocksBackToBackNeedNothing() {
        var placement = SoundPlacement(tolerance: 1024)
        XCTAssertEqual(placement.place(at: 500, count: 480), .init(silence: 0, skip: 0))
        XCTAssertEqual(placement.place(at: 980, count: 480), .init(silence: 0, skip: 0))
        XCTAssertEqual(placement.end, 1460)
    }

    func testJitterWithinTheToleranceIsLeftAlone() {
        var placement = SoundPlacement(tolerance: 1024)
        _ = placement.place(at: 0, count: 480)
        XCTAssertEqual(placement.place(at: 480 + 700, count: 480), .init(silence: 0, skip: 0))
        XCTAssertEqual(placement.place(at: 960 - 600, count: 480), .init(silence: 0, skip: 0))
        XCTAssertEqual(placement.end, 1440, "the samples run on back to back")
    }

    func testAGapIsFilledWithSilence() {
        var placement = SoundPlacement(tolerance: 1024)
        _ = placement.place(at: 0, count: 1024)
        XCTAssertEqual(placement.place(at: 1024 + 4800, count: 1024), .init(silence: 4800, skip: 0))
        XCTAssertEqual(placement.end, 1024 + 4800 + 1024)
    }

    func testAnOverlapIsCut() {
        var placement = SoundPlacement(tolerance: 1024)
        _ = placement.place(at: 0, count: 4800)
        XCTAssertEqual(placement.place(at: 4800 - 2000, count: 4800), .init(silence: 0, skip: 2000))
        XCTAssertEqual(placement.end, 4800 - 2000 + 4800)
        XCTAssertEqual(placement.place(at: 0, count: 1024), .init(silence: 0, skip: 1024), "wholly before the end: dropped")
        XCTAssertEqual(placement.end, 7600)
    }

    func testAResetStartsANewTimeline() {
        var placement = SoundPlacement(tolerance: 1024)
        _ = placement.place(at: 0, count: 1024)
        placement.reset()
        XCTAssertEqual(placement.place(at: 100_000, count: 1024), .init(silence: 0, skip: 0))
        XCTAssertEqual(placement.end, 101_024)
    }
}
