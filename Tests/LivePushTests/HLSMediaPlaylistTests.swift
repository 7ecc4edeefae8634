@testable import LivePush
import XCTest

/// The media playlist as text: header, segments with their date and cue tags, the end.
final class HLSMediaPlaylistTests: XCTestCase {
    /// 2026-11-27T11:30:35Z, µs.
    private let start: Int64 = 1_795_779_035_000_000

    func testTheTextListsEverySegmentWithItsDateAndLength() {
        var playlist = HLSMediaPlaylist()
        playlist.mediaSequence = 4
        playlist.segments = [
            .init(uri: "index4.ts", duration: 2_000_000, programDateTime: start + 123_000),
            .init(uri: "index5.ts", duration: 1_240_400, programDateTime: start + 2_123_000, tags: ["#EXT-X-CUE-OUT:DURATION=3.000"]),
        ]
        XCTAssertEqual(playlist.text, """
        #EXTM3U
        #EXT-X-VERSION:3
        #EXT-X-TARGETDURATION:2
        #EXT-X-MEDIA-SEQUENCE:4
        #EXT-X-PROGRAM-DATE-TIME:2026-11-27T11:30:35.123Z
        #EXTINF:2.000,
        index4.ts
        #EXT-X-CUE-OUT:DURATION=3.000
        #EXT-X-PROGRAM-DATE-TIME:2026-11-27T11:30:37.123Z
        #EXTINF:1.240,
        index5.ts

        """)
        playlist.ended = true
        XCTAssertTrue(playlist.text.hasSuffix("index5.ts\n#EXT-X-ENDLIST\n"))
    }

    func testTheTargetIsTheLongestLengthAsWrittenRoundedToTheNearestSecond() {
        var playlist = HLSMediaPlaylist()
        playlist.segments = [.init(uri: "a.ts", duration: 1_023_000, programDateTime: 0)]
        XCTAssertEqual(playlist.targetDuration, 1, "1.023 as written (RFC 8216: EXTINF rounded to the nearest integer <= target)")
        playlist.segments.append(.init(uri: "b.ts", duration: 2_499_400, programDateTime: 0))
        XCTAssertEqual(playlist.targetDuration, 2, "2.499 as written")
        playlist.segments.append(.init(uri: "c.ts", duration: 2_499_600, programDateTime: 0))
        XCTAssertEqual(playlist.targetDuration, 3, "2.500 as written")
        playlist.segments = []
        playlist.minimumTargetDuration = 3
        XCTAssertEqual(playlist.targetDuration, 3, "a live playlist's target does not shrink")
    }

    func testNumbersAndDates() {
        XCTAssertEqual(HLSMediaPlaylist.decimal(0), "0.000")
        XCTAssertEqual(HLSMediaPlaylist.decimal(40_000), "0.040")
        XCTAssertEqual(HLSMediaPlaylist.decimal(30_000_000), "30.000")
        XCTAssertEqual(HLSMediaPlaylist.decimal(1_999_500), "2.000")
        XCTAssertEqual(HLSMediaPlaylist.decimal(-40_000), "-0.040")
        XCTAssertEqual(HLSMediaPlaylist.dateTime(start), "2026-11-27T11:30:35.000Z")
        XCTAssertEqual(HLSMediaPlaylist.dateTime(start + 59_999_999), "2026-11-27T11:31:34.999Z")
        XCTAssertEqual(HLSMediaPlaylist.dateTime(0), "1970-01-01T00:00:00.000Z")
    }
}
