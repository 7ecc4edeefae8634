import Foundation
@testable import LivePush
import LivePushWire
import XCTest

/// The cue tags of a break: each form at its start, inside it and at its return, and the
/// sections they quote (decoded back).
final class HLSCueTagsTests: XCTestCase {
    private let wall: Int64 = 1_795_779_035_000_000

    /// A playout break's splice as the output receives it (AdCue's section, a `.cue` packet).
    private func splice(_ cue: AdCue) throws -> HLSSplice {
        try XCTUnwrap(HLSSplice(section: cue.section.encoded(), arrival: cue.sendAt))
    }

    func testABreakInAllThreeForms() throws {
        let out = try splice(AdCue(eventID: 42, outOfNetwork: true, spliceTime: 6_000_000, duration: 3_000_000, sendAt: 6_000_000))
        let back = try splice(AdCue(eventID: 42, outOfNetwork: false, spliceTime: 9_000_000, duration: nil, sendAt: 9_000_000))
        XCTAssertEqual(out.time, 6_000_000)
        XCTAssertEqual(out.duration, 3_000_000)
        XCTAssertEqual(back.outOfNetwork, false)
        var tags = HLSCueTags(forms: .all)
        let start = tags.tags(forSegmentAt: 6_000_000, date: wall + 6_000_000, splices: [out])
        XCTAssertEqual(start.count, 3)
        XCTAssertEqual(start[0], "#EXT-X-CUE-OUT:DURATION=3.000")
        XCTAssertEqual(start[1], "#EXT-OATCLS-SCTE35:\(Data(out.section).base64EncodedString())")
        XCTAssertEqual(start[2], "#EXT-X-DATERANGE:ID=\"splice-42\",START-DATE=\"2026-11-27T11:30:41.000Z\",PLANNED-DURATION=3.000,"
                       + "SCTE35-OUT=\(HLSCueTags.hex(out.section))")
        XCTAssertEqual(tags.tags(forSegmentAt: 8_000_000, date: wall + 8_000_000, splices: []),
                       ["#EXT-X-CUE-OUT-CONT:ElapsedTime=2.000,Duration=3.000"])
        let end = tags.tags(forSegmentAt: 9_000_000, date: wall + 9_000_000, splices: [back])
        XCTAssertEqual(end[0], "#EXT-X-CUE-IN")
        XCTAssertEqual(end[1], "#EXT-OATCLS-SCTE35:\(Data(back.section).base64EncodedString())")
        XCTAssertEqual(end[2], "#EXT-X-DATERANGE:ID=\"splice-42\",START-DATE=\"2026-11-27T11:30:41.000Z\","
                       + "END-DATE=\"2026-11-27T11:30:44.000Z\",DURATION=3.000,SCTE35-IN=\(HLSCueTags.hex(back.section))")
        XCTAssertTrue(tags.tags(forSegmentAt: 11_000_000, date: wall + 11_000_000, splices: []).isEmpty, "after the return, no tags")
    }

    func testTheQuotedSectionDecodesBackWithTheTSTimelinesAdjustment() throws {
        let out = try splice(AdCue(eventID: 7, outOfNetwork: true, spliceTime: 13_000_000, duration: 1_000_000, sendAt: 9_000_000))
        var tags = HLSCueTags(forms: .oatcls)
        let line = try XCTUnwrap(tags.tags(forSegmentAt: 13_000_000, date: wall, splices: [out]).first)
        let base64 = String(line.dropFirst("#EXT-OATCLS-SCTE35:".count))
        let section = try SpliceInfoSection(parsing: [UInt8](try XCTUnwrap(Data(base64Encoded: base64))))
        guard case .insert(let insert) = section.command else { return XCTFail("a splice_insert: \(section.command)") }
        XCTAssertEqual(insert.eventID, 7)
        XCTAssertTrue(insert.outOfNetwork)
        XCTAssertEqual(insert.spliceTime, 13 * 90_000)
        XCTAssertEqual(insert.breakDuration, 90_000)
        // splice_time + pts_adjustment is the PTS of the segment's first picture in its MPEG-TS.
        XCTAssertEqual(section.ptsAdjustment, TSClock.ticks90kHz(0))
        XCTAssertEqual(section.ptsAdjustment, 126_000, "the muxer's 1.4 s")
        // The hex form is the same section.
        let hex = HLSCueTags.hex(out.section)
        XCTAssertTrue(hex.hasPrefix("0xFC"))
        XCTAssertEqual(hex.count, 2 + 2 * out.section.count)
    }

    func testEachFormAlone() throws {
        let out = try splice(AdCue(eventID: 1, outOfNetwork: true, spliceTime: 0, duration: nil, sendAt: 0))
        for (format, prefix) in [(CueFormat.cueOut, "#EXT-X-CUE-OUT"), (.oatcls, "#EXT-OATCLS-SCTE35:"), (.dateRange, "#EXT-X-DATERANGE:")] {
            var tags = HLSCueTags(forms: HLSCueTags.Forms(format))
            let lines = tags.tags(forSegmentAt: 0, date: wall, splices: [out])
            XCTAssertEqual(lines.count, 1, "\(format)")
            XCTAssertTrue(lines[0].hasPrefix(prefix), lines[0])
        }
        // A break of unknown length: no DURATION, no PLANNED-DURATION.
        var all = HLSCueTags(forms: HLSCueTags.Forms(.adCue))
        let lines = all.tags(forSegmentAt: 0, date: wall, splices: [out])
        XCTAssertEqual(lines[0], "#EXT-X-CUE-OUT")
        XCTAssertFalse(lines[2].contains("PLANNED-DURATION"))
        XCTAssertEqual(all.tags(forSegmentAt: 2_000_000, date: wall, splices: []), ["#EXT-X-CUE-OUT-CONT:ElapsedTime=2.000"])
    }

    func testSectionsThatSpliceNothingAreNoSplices() {
        XCTAssertNil(HLSSplice(section: SpliceInfoSection(command: .null).encoded(), arrival: 0))
        XCTAssertNil(HLSSplice(section: [0xFC, 0x00], arrival: 0))
        var cancel = SpliceInsert(eventID: 3, spliceTime: 90_000)
        cancel.cancel = true
        XCTAssertNil(HLSSplice(section: SpliceInfoSection(command: .insert(cancel)).encoded(), arrival: 0))
    }
}
