import XCTest
@testable import LivePush

/// The programme guide's logic: programmes from a schedule, times, escaping; and the schedule
/// fields it reads.
final class XMLTVGuideTests: XCTestCase {
    private func clip(_ id: String, _ i: Double, _ o: Double, title: String? = nil) -> PlayoutSchedule.Clip {
        var clip = PlayoutSchedule.Clip(id: id, source: "/media/\(id.uppercased()).mp4", in: i, out: o)
        clip.programme.title = title
        return clip
    }

    func testOneProgrammePerClipWithItsBreaksInsideAndAdsBetweenAsGaps() {
        let schedule = PlayoutSchedule(loop: .times(2), content: [clip("a", 2, 8, title: "News"), clip("b", 0, 4)], ads: [
            .init(clip: clip("x1", 0, 2), type: .preroll, deleteAfterPlay: true),
            .init(clip: clip("y1", 0, 2), type: .midroll, at: 4, deleteAfterPlay: true),
            .init(clip: clip("x3", 0, 1), type: .postroll),
        ])
        let start: Int64 = 1_795_000_000_000_000
        let programmes = XMLTVGuide.programmes(of: schedule, from: start)
        // x1 2 s, a 2..4 (2 s... from the main timeline's 0 to 4: 4 s), y1 2 s, a 2 s, b 4 s; pass 2: a 6, b 4; x3.
        XCTAssertEqual(programmes.map(\.title), ["News", "B.mp4", "News", "B.mp4"])
        XCTAssertEqual(programmes.map { ($0.start - start) / 1_000_000 }, [2, 10, 14, 20])
        XCTAssertEqual(programmes.map { ($0.stop - start) / 1_000_000 }, [10, 14, 20, 24])
    }

    func testTheDocumentEscapesAndFormatsTimes() {
        let info = ProgrammeInfo(title: "Tom & Jerry <live>", description: "\"quoted\" 'text'\u{1}", category: "Kids", episode: "S01E02")
        let programme = XMLTVGuide.Programme(id: "a", start: 1_795_000_000_000_000, stop: 1_795_000_060_000_000,
                                             title: info.title!, info: info)
        let xml = XMLTVGuide.document(channelID: "c&1", displayName: "C <1>", programmes: [programme])
        XCTAssertTrue(xml.contains(#"<programme start="20261118110640 +0000" stop="20261118110740 +0000" channel="c&amp;1">"#), xml)
        XCTAssertTrue(xml.contains("<title>Tom &amp; Jerry &lt;live&gt;</title>"), xml)
        XCTAssertTrue(xml.contains("<desc>&quot;quoted&quot; &apos;text&apos;</desc>"), xml)
        XCTAssertTrue(xml.contains(#"<episode-num system="onscreen">S01E02</episode-num>"#), xml)
        XCTAssertTrue(xml.contains("<display-name>C &lt;1&gt;</display-name>"), xml)
    }

    func testAnUntitledEntryIsListedByItsFileNameAndALiveOneWithoutItsKey() {
        XCTAssertEqual(ProgrammeInfo().title(for: "/media/shows/Pilot.mp4"), "Pilot.mp4")
        XCTAssertEqual(ProgrammeInfo(title: "Pilot").title(for: "/media/shows/Pilot.mp4"), "Pilot")
        let live = ProgrammeInfo().title(for: "rtmp://ingest.example/live/s3cretStreamKey")
        XCTAssertFalse(live.contains("s3cretStreamKey"), live)
        XCTAssertTrue(live.hasPrefix("rtmp://ingest.example/live/"), live)
    }

    func testAScheduleLoopedForeverIsListedAsFarAsTheBound() {
        let schedule = PlayoutSchedule(loop: .forever, content: [clip("a", 0, 1)])
        XCTAssertEqual(XMLTVGuide.programmes(of: schedule, from: 0).count, XMLTVGuide.maxProgrammes)
    }

    func testEntryFieldsAreReadAndUnknownOnesRefusedByName() throws {
        let good = #"{"content": [{"id": "a", "source": "/m/A.mp4", "in": 0, "out": 2, "title": "News", "description": "d", "category": "c", "episode": "e"}]}"#
        let schedule = try PlayoutSchedule(json: Data(good.utf8))
        XCTAssertEqual(schedule.content[0].programme, ProgrammeInfo(title: "News", description: "d", category: "c", episode: "e"))
        for (json, field) in [(#"{"content": [{"id": "a", "source": "A", "in": 0, "out": 2, "overlay": []}]}"#, "overlay"),
                              (#"{"content": [{"id": "a", "source": "A", "in": 0, "out": 2}], "ads": [{"id": "x", "source": "X", "in": 0, "out": 1, "type": "preroll", "when": 3}]}"#, "when")] {
            XCTAssertThrowsError(try PlayoutSchedule(json: Data(json.utf8))) { error in
                let error = error as? LivePushError
                XCTAssertEqual(error?.code, .scheduleFieldUnknown)
                XCTAssertEqual(error?.code.rawValue, 805_504_004)
                XCTAssertTrue(error?.message.contains("field \"\(field)\"") ?? false, "\(String(describing: error))")
            }
        }
        XCTAssertThrowsError(try PlayoutSchedule.Clip(json: Data(#"{"id": "z", "source": "X", "in": 0, "out": 1, "titel": "x"}"#.utf8))) {
            XCTAssertEqual(($0 as? LivePushError)?.code, .scheduleFieldUnknown)
        }
        let long = String(repeating: "x", count: ProgrammeInfo.maxNameLength + 1)
        XCTAssertThrowsError(try PlayoutSchedule(json: Data(#"{"content": [{"id": "a", "source": "A", "in": 0, "out": 2, "title": "\#(long)"}]}"#.utf8))) {
            XCTAssertEqual(($0 as? LivePushError)?.code, .scheduleInvalid)
        }
    }
}
