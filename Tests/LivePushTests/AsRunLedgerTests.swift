import XCTest
@testable import LivePush

/// The as-run log's logic, without a channel: output times in, lines out.
final class AsRunLedgerTests: XCTestCase {
    private let start: Int64 = 1_795_000_000_000_000  // 2026-11-18T11:06:40Z
    private func item(_ id: String, _ kind: AsRunRecord.Kind = .content, event: UInt32? = nil) -> AsRunLedger.Item {
        .init(id: id, kind: kind, title: id.uppercased(), source: "/media/\(id).mp4", eventID: event)
    }
    private func summary(_ records: [AsRunRecord]) -> [String] {
        records.map { "\($0.id) \($0.kind.rawValue) \(($0.start - start) / 1000)+\($0.duration / 1000) \($0.ending.rawValue)" + ($0.eventID.map { " #\($0)" } ?? "") }
    }

    func testEntriesBreaksAndTheEndInOutputTime() {
        var ledger = AsRunLedger(channelStart: start)
        var lines: [AsRunRecord] = []
        lines += ledger.entryStarted(item("a"), at: 0)
        lines += ledger.entryStarted(item("y1", .ad, event: 7), at: 4_000_000)
        lines += ledger.entryStarted(item("x2", .pod, event: 7), at: 6_000_000)
        lines += ledger.entryStarted(item("a"), at: 7_000_000)
        ledger.skipRequested()
        lines += ledger.entryStarted(item("b"), at: 7_520_000)
        lines += ledger.finished(at: 9_040_000)
        XCTAssertEqual(summary(lines), ["a content 0+4000 completed", "y1 ad 4000+2000 completed #7", "x2 pod 6000+1000 completed #7",
                                        "a content 7000+520 skipped", "b content 7520+1520 completed"])
    }

    func testABlackoutCutsTheEntryIntoThePartsThatAired() {
        var ledger = AsRunLedger(channelStart: start)
        var lines: [AsRunRecord] = []
        lines += ledger.entryStarted(item("a"), at: 0)
        lines += ledger.breakStarted(item("3", .alternate, event: 3), at: 1_000_000)
        // The timeline runs on underneath: b starts and c starts, neither on air yet.
        lines += ledger.entryStarted(item("b"), at: nil)
        lines += ledger.entryStarted(item("c"), at: nil)
        lines += ledger.breakEnded(at: 5_000_000)
        lines += ledger.finished(at: 6_000_000)
        XCTAssertEqual(summary(lines), ["a content 0+1000 cutByBlackout", "3 alternate 1000+4000 completed #3", "c content 5000+1000 completed"])
    }

    func testAFailureMidwayAndTheSlate() {
        var ledger = AsRunLedger(channelStart: start)
        var lines = ledger.entryStarted(item("a"), at: 0)
        lines += ledger.entryFailed(at: 1_200_000)
        lines += ledger.entryStarted(item("a", .slate), at: 1_200_000)
        lines += ledger.entryStarted(item("b"), at: 3_000_000)
        lines += ledger.finished(at: 3_000_000)
        XCTAssertEqual(summary(lines), ["a content 0+1200 failed", "a slate 1200+1800 completed"])
    }

    func testALiveEntrysLostFeedIsTheSlatesPartUntilItIsBack() {
        var ledger = AsRunLedger(channelStart: start)
        var lines = ledger.entryStarted(item("live"), at: 0)
        lines += ledger.standInStarted(item("live", .slate), at: 2_000_000)
        lines += ledger.standInEnded(at: 3_500_000)
        lines += ledger.standInStarted(item("live", .backup), at: 4_000_000)
        lines += ledger.entryStarted(item("b"), at: 5_000_000)
        lines += ledger.standInEnded(at: 5_500_000)  // too late: the entry is over
        lines += ledger.finished(at: 6_000_000)
        XCTAssertEqual(summary(lines), ["live content 0+2000 failed", "live slate 2000+1500 completed", "live content 3500+500 failed",
                                        "live backup 4000+1000 completed", "b content 5000+1000 completed"])
    }

    func testTheChannelStartIsFixedOnceALineIsOut() {
        var ledger = AsRunLedger(channelStart: start)
        ledger.anchor(channelStart: start + 40_000)
        var lines = ledger.entryStarted(item("a"), at: 0)
        lines += ledger.entryStarted(item("b"), at: 1_000_000)
        ledger.anchor(channelStart: start)
        lines += ledger.finished(at: 2_000_000)
        XCTAssertEqual(lines.map { $0.start - start }, [40_000, 1_040_000])
    }

    func testTheLineIsOneJSONObjectWithMillisecondsAndEscapedText() throws {
        let record = AsRunRecord(id: "a\"1", kind: .ad, title: "Line\nbreak \u{1b}[31m", source: "/m/a.mp4",
                                 start: 1_795_000_000_123_456, duration: 4_000_999, eventID: 42, ending: .completed)
        let line = record.jsonLine
        XCTAssertFalse(line.contains("\n"))
        XCTAssertFalse(line.contains("\u{1b}"))
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        XCTAssertEqual(object["start"] as? String, "2026-11-18T11:06:40.123Z")
        XCTAssertEqual(object["duration"] as? Double, 4.0)
        XCTAssertEqual(object["eventId"] as? Int, 42)
        XCTAssertEqual(object["title"] as? String, "Line\nbreak \u{1b}[31m")
        XCTAssertEqual(object["ended"] as? String, "completed")
        XCTAssertEqual(AsRunRecord.iso8601(0), "1970-01-01T00:00:00.000Z")
    }
}
