@testable import LivePushLoopback
import LivePushWire
import XCTest

/// What the receiver keeps of a peer's lists and metadata (`PeerValueCaps`) and of ended
/// publishes (`SummaryLog`): bounded in entries and bytes, whatever the peer sent.
final class ReceiverPeerValueCapsTests: XCTestCase {
    private let caps = PeerValueCaps()

    func testAFourCcListIsCutToSixteenShortStrings() {
        let huge = (0..<1_000_000).map { _ in AMF0Value.string("hvc1") }
        let trimmed = caps.fourCcList(huge)
        XCTAssertEqual(trimmed.kept.count, 16)
        XCTAssertEqual(trimmed.dropped, 1_000_000 - 16)

        let mixed: [AMF0Value] = [.string("av01"), .number(1), .string(String(repeating: "x", count: 9)), .string("*")]
        let kept = caps.fourCcList(mixed)
        XCTAssertEqual(kept.kept, ["av01", "*"], "no number, nothing over 8 bytes")
        XCTAssertEqual(kept.dropped, 2)
        XCTAssertEqual(caps.fourCcList([.string("hvc1"), .string("av01")]).dropped, 0, "a real list is kept whole")
    }

    func testMetadataKeepsPlainValuesWithinCountAndBytes() {
        let real = [AMF0Property("width", .number(1280)), AMF0Property("height", .number(720)),
                    AMF0Property("encoder", .string("Lavf61")), AMF0Property("stereo", .boolean(true))]
        XCTAssertEqual(caps.metadata(real).kept, real)
        XCTAssertEqual(caps.metadata(real).dropped, 0)

        let many = (0..<750_000).map { AMF0Property("p\($0)", .number(Double($0))) }
        let trimmed = caps.metadata(many)
        XCTAssertEqual(trimmed.kept.count, 64)
        XCTAssertEqual(trimmed.dropped, 750_000 - 64)

        let odd = [AMF0Property("nested", .object([AMF0Property("a", .number(1))])),
                   AMF0Property("list", .strictArray([.number(1)])),
                   AMF0Property("long", .string(String(repeating: "y", count: 257))),
                   AMF0Property(String(repeating: "k", count: 65), .number(1)),
                   AMF0Property("ok", .null)]
        XCTAssertEqual(caps.metadata(odd).kept, [AMF0Property("ok", .null)], "objects, arrays, long strings and keys dropped")

        let wide = (0..<64).map { AMF0Property("s\($0)", .string(String(repeating: "z", count: 200))) }
        let bytes = caps.metadata(wide).kept.reduce(0) { $0 + $1.key.utf8.count + ($1.value.stringValue?.utf8.count ?? 0) }
        XCTAssertLessThanOrEqual(bytes, caps.maxMetadataBytes)
        XCTAssertLessThan(caps.metadata(wide).kept.count, 64, "the byte cap stops it before the count does")
    }

    func testTheSummaryLogIsBoundedInBytesAndCount() {
        var log = SummaryLog(maxCount: 1000, maxBytes: 64 * 1024)
        let small = Self.summary(id: 0, metadata: [])
        let large = Self.summary(id: 0, metadata: (0..<64).map { AMF0Property("s\($0)", .string(String(repeating: "z", count: 56))) })
        XCTAssertGreaterThan(large.estimatedBytes, 4096)
        for id in 1...200 {
            var s = large
            s.publishID = id
            log.append(s)
            XCTAssertLessThanOrEqual(log.bytes, 64 * 1024)
        }
        XCTAssertLessThan(log.summaries.count, 200, "bytes, not count, dropped the oldest")
        XCTAssertEqual(log.summaries.last?.publishID, 200, "the newest is kept")
        XCTAssertEqual(log.dropped + log.summaries.count, 200, "every drop is counted")

        var counted = SummaryLog(maxCount: 10, maxBytes: .max)
        for id in 1...25 { var s = small; s.publishID = id; counted.append(s) }
        XCTAssertEqual(counted.summaries.map(\.publishID), Array(16...25))

        var tiny = SummaryLog(maxCount: 10, maxBytes: 1)
        tiny.append(large)
        XCTAssertEqual(tiny.summaries.count, 1, "one over the budget alone is still kept (a waiter gets it)")
    }

    static func summary(id: Int, metadata: [AMF0Property]) -> PublishSummary {
        PublishSummary(publishID: id, app: "live", stream: "s", remote: "127.0.0.1:1", videoFrames: 0, videoKeyframes: 0,
                       firstVideoFrameIsKeyframe: nil, sequenceHeaders: 0, audioFrames: 0, dataMessages: 0, bytes: 0,
                       firstTimestampMs: nil, lastTimestampMs: nil, recordingPath: nil, metadata: metadata, monotonic: true,
                       videoFourCC: nil, announcedFourCcList: nil, droppedPeerValues: 0, endReason: "disconnect")
    }
}
