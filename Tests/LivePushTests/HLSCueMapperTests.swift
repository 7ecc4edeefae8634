import FoundationEssentials
import LivePushWire
import XCTest
@testable import LivePush

/// HLS cue tags become the SCTE-35 sections a TS input would carry, and from there the
/// opportunities the default resolver opens and closes.
final class HLSCueMapperTests: XCTestCase {
    /// threefive's out-of-network splice_insert, event 7, for 5 s with auto-return.
    private var oatclsOut: String {
        let insert = SpliceInsert(eventID: 7, outOfNetwork: true, spliceTime: 900_000, breakDuration: 450_000, autoReturn: true)
        return Data(SpliceInfoSection(command: .insert(insert)).encoded()).base64EncodedString()
    }

    private func signals(_ section: [UInt8]) throws -> [OpportunitySignal] {
        SCTE35OpportunityResolver().signals(for: try SourceCue(bytes: section, arrival: 6_000_000))
    }

    func testAnOATCLSOutAndACueInCloseOneBreak() throws {
        var mapper = HLSCueMapper()
        let out = mapper.sections(for: [.oatcls(base64: oatclsOut)])
        let back = mapper.sections(for: [.cueIn])
        XCTAssertEqual(out.count, 1)
        guard case .opens(let opportunity) = try signals(out[0]).first else { return XCTFail("no opening") }
        XCTAssertEqual(opportunity.id, 7)
        XCTAssertEqual(opportunity.duration, 5_000_000)
        XCTAssertEqual(try signals(back[0]), [.closes(id: 7, at: 6_000_000)], "the CUE-IN closes event 7")
    }

    func testCueOutWithAndWithoutADuration() throws {
        var mapper = HLSCueMapper()
        let sections = mapper.sections(for: [.cueOut(duration: 30), .cueIn, .cueOut(duration: nil), .cueIn])
        guard case .opens(let first) = try signals(sections[0]).first,
              case .opens(let second) = try signals(sections[2]).first else { return XCTFail("no openings") }
        XCTAssertEqual(first.duration, 30_000_000)
        XCTAssertEqual(try signals(sections[1]), [.closes(id: first.id, at: 6_000_000)])
        XCTAssertNil(second.duration, "open until its CUE-IN")
        XCTAssertNotEqual(first.id, second.id)
        XCTAssertEqual(try signals(sections[3]), [.closes(id: second.id, at: 6_000_000)])
        let section = try SpliceInfoSection(parsing: sections[0])
        guard case .insert(let insert) = section.command else { return XCTFail("not a splice_insert") }
        XCTAssertTrue(insert.spliceImmediate, "at its segment, wherever that plays")
        XCTAssertTrue(insert.autoReturn)
    }

    func testADateRangeCarriesItsSectionAndACueInEndsItsSegmentation() throws {
        var start = SegmentationDescriptor(eventID: 42, typeID: SCTE35SegmentationType.providerPlacementOpportunityStart, duration: 2_700_000)
        start.segmentNum = 1
        let section = SpliceInfoSection(command: .timeSignal(1_000), descriptors: [.segmentation(start)]).encoded()
        let hex = "0x" + section.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        var mapper = HLSCueMapper()
        let sections = mapper.sections(for: [.dateRange(id: "42", attribute: .out, hex: hex, duration: 30), .cueIn])
        XCTAssertEqual(sections[0], section)
        guard case .opens(let opportunity) = try signals(sections[0]).first else { return XCTFail("no opening") }
        XCTAssertEqual(opportunity.id, 42)
        XCTAssertEqual(try signals(sections[1]), [.closes(id: 42, at: 6_000_000)])
    }

    func testUnsubscribedFamiliesAreLeftOutAndBadPayloadsAreRefusedDownstream() {
        var mapper = HLSCueMapper(families: [.oatcls])
        XCTAssertEqual(mapper.sections(for: [.cueOut(duration: 5), .dateRange(id: "", attribute: .cmd, hex: "0xFC", duration: nil)]), [])
        let bad = mapper.sections(for: [.oatcls(base64: "not base64!")])
        XCTAssertEqual(bad, [[]])
        XCTAssertThrowsError(try SourceCue(bytes: bad[0], arrival: 0)) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .cueInvalid)
        }
    }

    func testSubscribeTakesTheTagNames() throws {
        let tags = try CueSubscription(parsing: "#EXT-OATCLS-SCTE35, #ext-x-cue-in")
        XCTAssertEqual(tags.hlsTags, [.oatcls, .cueOutIn])
        XCTAssertEqual(tags.adBreakTypes, CueSubscription().adBreakTypes, "no cue named: the default ones")
        XCTAssertTrue(tags.spliceInserts)
        let both = try CueSubscription(parsing: "#EXT-X-DATERANGE,break")
        XCTAssertEqual(both.hlsTags, [.dateRange])
        XCTAssertFalse(both.spliceInserts)
        XCTAssertEqual(both.adBreakTypes, [SCTE35SegmentationType.breakStart])
        XCTAssertEqual(try CueSubscription(parsing: "splice_insert").hlsTags, Set(HLSTagFamily.allCases))
        XCTAssertThrowsError(try CueSubscription(parsing: "#EXT-X-NOPE"))
    }
}
