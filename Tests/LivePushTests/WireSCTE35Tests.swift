import Foundation
import LivePushWire
@testable import LivePush
import XCTest

/// SCTE-35 sections: real cue samples (the standard's examples, as threefive decodes them),
/// round trips, the CRC, and malformed input refused without a crash.
final class WireSCTE35Tests: XCTestCase {
    private func bytes(_ base64: String) -> [UInt8] { [UInt8](Data(base64Encoded: base64)!) }

    /// splice_insert, out of network, with a break_duration and an avail descriptor.
    private let spliceInsert = "/DAvAAAAAAAA///wFAVIAACPf+/+c2nALv4AUsz1AAAAAAAKAAhDVUVJAAABNWLbowo="
    /// time_signal with a provider placement opportunity start (segmentation type 0x34).
    private let timeSignal = "/DA0AAAAAAAA///wBQb+cr0AUAAeAhxDVUVJSAAAjn/PAAGlmbAICAAAAAAsoKGKNAIAmsnRfg=="

    func testTheCRCIsMPEG2() {
        XCTAssertEqual(SCTE35.crc32(Array("123456789".utf8)), 0x0376_E6E7)
    }

    func testASpliceInsertSample() throws {
        let section = try SpliceInfoSection(parsing: bytes(spliceInsert))
        guard case .insert(let insert) = section.command else { return XCTFail("\(section.command)") }
        XCTAssertEqual(insert.eventID, 1_207_959_695)
        XCTAssertTrue(insert.outOfNetwork)
        XCTAssertEqual(Double(insert.spliceTime ?? 0) / 90_000, 21514.559089, accuracy: 0.00001)
        XCTAssertEqual(Double(insert.breakDuration ?? 0) / 90_000, 60.293567, accuracy: 0.00001)
        XCTAssertTrue(insert.autoReturn)
        XCTAssertEqual(section.descriptors, [.other(tag: 0, identifier: SCTE35.cueIdentifier, bytes: [0, 0, 1, 0x35])])
        XCTAssertEqual(section.encoded(), bytes(spliceInsert), "re-encoded bit for bit")
    }

    func testATimeSignalWithASegmentationDescriptor() throws {
        let section = try SpliceInfoSection(parsing: bytes(timeSignal))
        XCTAssertEqual(section.command, .timeSignal(UInt64((21388.766756 * 90_000).rounded())))
        guard case .segmentation(let s) = section.descriptors.first else { return XCTFail("\(section.descriptors)") }
        XCTAssertEqual(s.typeID, 0x34, "provider placement opportunity start")
        XCTAssertEqual(s.eventID, 0x4800_008E)
        XCTAssertEqual(s.duration, 307 * 90_000)
        XCTAssertEqual(s.upidType, 8)
        XCTAssertEqual(s.upid, [0, 0, 0, 0, 0x2C, 0xA0, 0xA1, 0x8A])
        XCTAssertEqual(s.segmentNum, 2)
        let again = try SpliceInfoSection(parsing: section.encoded())
        XCTAssertEqual(again, section)
    }

    func testBuiltCuesRoundTrip() throws {
        let out = SpliceInfoSection(command: .insert(SpliceInsert(eventID: 7, spliceTime: 900_000, breakDuration: 450_000,
                                                                  availNum: 1, availsExpected: 3)))
        XCTAssertEqual(try SpliceInfoSection(parsing: out.encoded()), out)
        var back = SpliceInsert(eventID: 7, outOfNetwork: false, spliceTime: nil)
        back.autoReturn = false
        let immediate = SpliceInfoSection(command: .insert(back))
        XCTAssertEqual(try SpliceInfoSection(parsing: immediate.encoded()), immediate)
        var blackout = SegmentationDescriptor(eventID: 9, typeID: 0x18, duration: 90_000 * 30)
        blackout.subSegment = (1, 2)
        let signal = SpliceInfoSection(command: .timeSignal(123), descriptors: [.segmentation(blackout)], ptsAdjustment: 5)
        XCTAssertEqual(try SpliceInfoSection(parsing: signal.encoded()), signal)
        XCTAssertEqual(try SpliceInfoSection(parsing: SpliceInfoSection(command: .null).encoded()).command, .null)
    }

    func testMalformedSectionsAreRefused() {
        var corrupted = bytes(spliceInsert)
        corrupted[10] ^= 1
        XCTAssertThrowsError(try SpliceInfoSection(parsing: corrupted)) { error in
            guard case .crcMismatch = error as? SCTE35.ParseError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try SpliceInfoSection(parsing: [0xFD] + bytes(spliceInsert).dropFirst()))
        for length in 0..<bytes(spliceInsert).count {
            XCTAssertThrowsError(try SpliceInfoSection(parsing: Array(bytes(spliceInsert).prefix(length))), "cut at \(length)")
        }
    }
}

/// The cue messages LivePush sends, in each format: AMF0 data bodies whose SCTE-35 section
/// says what the fields say.
final class AdCueMessageTests: XCTestCase {
    private let cue = AdCue(eventID: 42, outOfNetwork: true, spliceTime: 6_000_000, duration: 3_000_000, sendAt: 2_000_000)

    private func fields(_ body: [UInt8]) throws -> (String, [AMF0Property]) {
        let values = try AMF0.decode(body)
        guard case .string(let handler) = values.first, let props = values.dropFirst().first?.properties else {
            throw XCTSkip("not a handler and an object: \(values)")
        }
        return (handler, props)
    }

    private func value(_ props: [AMF0Property], _ key: String) -> AMF0Value? { props.first { $0.key == key }?.value }

    func testOnAdCueCarriesAValidSpliceInsert() throws {
        let (handler, props) = try fields(cue.message(.adCue))
        XCTAssertEqual(handler, "onAdCue", "not wrapped in @setDataFrame")
        XCTAssertEqual(value(props, "type"), .string("scte35"))
        XCTAssertEqual(value(props, "time"), .number(6))
        XCTAssertEqual(value(props, "duration"), .number(3))
        XCTAssertEqual(value(props, "id"), .string("42"))
        guard case .string(let base64) = value(props, "cue"), let bytes = Data(base64Encoded: base64) else { return XCTFail("\(props)") }
        let section = try SpliceInfoSection(parsing: [UInt8](bytes))
        guard case .insert(let insert) = section.command else { return XCTFail("\(section)") }
        XCTAssertEqual(insert.eventID, 42)
        XCTAssertTrue(insert.outOfNetwork)
        XCTAssertEqual(insert.spliceTime, 6 * 90_000)
        XCTAssertEqual(insert.breakDuration, 3 * 90_000)
    }

    func testElementalAndYouTubeCuePoints() throws {
        let (elemental, e) = try fields(cue.message(.elemental))
        XCTAssertEqual(elemental, "onCuePoint")
        XCTAssertEqual(value(e, "name"), .string("scte35"))
        XCTAssertEqual(value(e, "type"), .string("event"))
        XCTAssertEqual(value(e, "time"), .number(6))
        let (youtube, y) = try fields(cue.message(.youtube))
        XCTAssertEqual(youtube, "onCuePoint")
        XCTAssertEqual(value(y, "type"), .string("com.youtube.cuepoint"))
        XCTAssertEqual(value(y, "pre_roll_time_sec"), .number(4), "sent 4 s ahead")
        XCTAssertEqual(value(y, "break_duration_sec"), .number(3))
    }
}
