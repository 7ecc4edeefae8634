import Foundation
import LivePushWire
@testable import LivePush
import XCTest

/// The pure side of breaks: cues read into opportunities (the SCTE-35 resolver and the
/// subscription), their times on the input's timeline, and the schedule that says which
/// break plays when.
final class BreakLogicTests: XCTestCase {
    private func cue(_ base64: String, arrival: Int64) throws -> SourceCue {
        try SourceCue(bytes: [UInt8](Data(base64Encoded: base64)!), arrival: arrival)
    }

    /// A real splice_insert (out, 60.29 s, auto-return) and a time_signal with a provider
    /// placement opportunity start (0x34, 307 s): the samples of WireSCTE35Tests.
    private let spliceInsert = "/DAvAAAAAAAA///wFAVIAACPf+/+c2nALv4AUsz1AAAAAAAKAAhDVUVJAAABNWLbowo="
    private let timeSignal = "/DA0AAAAAAAA///wBQb+cr0AUAAeAhxDVUVJSAAAjn/PAAGlmbAICAAAAAAsoKGKNAIAmsnRfg=="

    func testAnOutOfNetworkSpliceInsertOpensAnAdBreakForItsDuration() throws {
        let read = try cue(spliceInsert, arrival: 21_510_000_000)
        XCTAssertEqual(Double(read.spliceTime) / 1e6, 21514.559089, accuracy: 1e-5)
        let signals = SCTE35OpportunityResolver().signals(for: read)
        guard case .opens(let opportunity) = signals.first, signals.count == 1 else { return XCTFail("\(signals)") }
        XCTAssertEqual(opportunity.kind, .adBreak)
        XCTAssertEqual(opportunity.id, 1_207_959_695)
        XCTAssertEqual(Double(opportunity.duration ?? 0) / 1e6, 60.293567, accuracy: 1e-5)
    }

    func testASegmentationStartOpensOnlyWhenSubscribed() throws {
        let read = try cue(timeSignal, arrival: 21_388_000_000)
        guard case .opens(let opportunity) = SCTE35OpportunityResolver().signals(for: read).first else { return XCTFail() }
        XCTAssertEqual(opportunity.id, 0x4800_008E)
        XCTAssertEqual(opportunity.duration, 307_000_000)
        XCTAssertEqual(Double(opportunity.start) / 1e6, 21388.766756, accuracy: 1e-5)
        let onlyInserts = SCTE35OpportunityResolver(subscription: try CueSubscription(parsing: "splice_insert"))
        XCTAssertEqual(onlyInserts.signals(for: read), [])
        let asBlackout = SCTE35OpportunityResolver(subscription: try CueSubscription(parsing: "blackout:0x34"))
        guard case .opens(let blackout) = asBlackout.signals(for: read).first else { return XCTFail() }
        XCTAssertEqual(blackout.kind, .blackout)
    }

    func testReturnsEndsAndCancelsClose() {
        let resolver = SCTE35OpportunityResolver()
        let back = SourceCue(section: SpliceInfoSection(command: .insert(SpliceInsert(eventID: 9, outOfNetwork: false, spliceTime: 900_000))),
                             arrival: 9_000_000)
        XCTAssertEqual(resolver.signals(for: back), [.closes(id: 9, at: 10_000_000)])
        var cancel = SpliceInsert(eventID: 9, spliceTime: nil)
        cancel.cancel = true
        XCTAssertEqual(resolver.signals(for: SourceCue(section: SpliceInfoSection(command: .insert(cancel)), arrival: 0)), [.cancels(id: 9)])
        let end = SourceCue(section: SpliceInfoSection(command: .timeSignal(90_000),
                                                       descriptors: [.segmentation(SegmentationDescriptor(eventID: 4, typeID: 0x35))]),
                            arrival: 0)
        XCTAssertEqual(resolver.signals(for: end), [.closes(id: 4, at: 1_000_000)])
        XCTAssertEqual(resolver.signals(for: SourceCue(section: SpliceInfoSection(command: .null), arrival: 5)), [])
    }

    func testSpliceTimesApplyThePTSAdjustmentAndUnwrapNearTheArrival() {
        var section = SpliceInfoSection(command: .timeSignal(SCTE35.ticksMask - 90_000 + 1), ptsAdjustment: 180_000)
        // (2^33 - 1 s) + 2 s wraps to 1 s; the input's timeline is past the wrap.
        let period = Int64((SCTE35.ticksMask + 1) * 1_000_000 / 90_000)
        XCTAssertEqual(SourceCue(section: section, arrival: period + 500_000).spliceTime, period + 1_000_000)
        XCTAssertEqual(SourceCue(section: section, arrival: 0).spliceTime, 1_000_000)
        section.command = .timeSignal(nil)
        XCTAssertEqual(SourceCue(section: section, arrival: 42).spliceTime, 42, "immediate: where it arrived")
    }

    func testAMalformedCueIsRefusedWithItsCode() {
        var bytes = [UInt8](Data(base64Encoded: spliceInsert)!)
        bytes[bytes.count - 1] ^= 0xFF
        XCTAssertThrowsError(try SourceCue(bytes: bytes, arrival: 0)) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .cueInvalid)
        }
        XCTAssertThrowsError(try SourceCue(bytes: [0xFC, 0x30], arrival: 0))
    }

    func testSubscriptionsParseNamesAndTypesAndRefuseTheRest() throws {
        let parsed = try CueSubscription(parsing: "splice_insert, provider_ad,0x40,blackout:0x10")
        XCTAssertTrue(parsed.spliceInserts)
        XCTAssertEqual(parsed.adBreakTypes, [0x30, 0x40])
        XCTAssertEqual(parsed.blackoutTypes, [0x10])
        for bad in ["", "nonsense", "0x23", "0xZZ", "splice_insert,,break"] {
            XCTAssertThrowsError(try CueSubscription(parsing: bad), bad) { error in
                XCTAssertEqual((error as? LivePushError)?.code, .breakSetupInvalid)
            }
        }
    }

    func testThePassedOnCueKeepsTheSectionWithItsTimeOnTheOutput() throws {
        let read = try cue(timeSignal, arrival: 21_388_000_000)
        let passed = read.passedOn(InputTimeMapping(shift: -21_380_000_000), sendAt: 8_000_000)
        XCTAssertEqual(Double(passed.spliceTime) / 1e6, 8.766756, accuracy: 1e-5)
        let section = passed.section
        XCTAssertEqual(section.descriptors, read.section.descriptors, "segmentation descriptors kept")
        XCTAssertEqual(section.ptsAdjustment, 0)
        XCTAssertEqual(section.command, .timeSignal(AdCue.ticks(passed.spliceTime)))
    }

    // MARK: The schedule

    private func opens(_ id: UInt32, at start: Int64, for duration: Int64?, kind: PlacementOpportunity.Kind = .adBreak) -> OpportunitySignal {
        .opens(PlacementOpportunity(id: id, kind: kind, start: start, duration: duration))
    }

    func testABreakStartsWhenTheMainInputReachesItAndEndsWhereItsCueSays() {
        var schedule = BreakSchedule()
        XCTAssertEqual(schedule.apply(opens(1, at: 6_000_000, for: nil)), .opened(PlacementOpportunity(id: 1, kind: .adBreak, start: 6_000_000, duration: nil)))
        XCTAssertEqual(schedule.apply(opens(1, at: 6_000_000, for: 5_000_000)), .none, "a repeat updates, it does not open again")
        XCTAssertNil(schedule.start(dueBy: 5_960_000))
        XCTAssertEqual(schedule.start(dueBy: 6_000_000)?.end, 11_000_000)
        XCTAssertNil(schedule.start(dueBy: 6_040_000), "one at a time")
        _ = schedule.apply(.closes(id: 1, at: 10_000_000))
        XCTAssertEqual(schedule.active?.end, 10_000_000, "an earlier return ends it earlier")
        XCTAssertEqual(schedule.finishActive()?.opportunity.id, 1)
        XCTAssertEqual(schedule.apply(opens(1, at: 6_000_000, for: 5_000_000)), .none, "a late repeat of a played break is ignored")
    }

    func testCancelledAndAlreadyOverOpportunitiesDoNotPlay() {
        var schedule = BreakSchedule()
        _ = schedule.apply(opens(1, at: 2_000_000, for: 1_000_000))
        _ = schedule.apply(opens(2, at: 5_000_000, for: 1_000_000))
        XCTAssertEqual(schedule.apply(.cancels(id: 2)), .cancelled(PlacementOpportunity(id: 2, kind: .adBreak, start: 5_000_000, duration: 1_000_000)))
        XCTAssertNil(schedule.start(dueBy: 3_500_000), "break 1 was over before the input got there")
        XCTAssertNil(schedule.start(dueBy: 5_500_000), "break 2 was called off")
        _ = schedule.apply(opens(3, at: 7_000_000, for: nil))
        XCTAssertNotNil(schedule.start(dueBy: 7_000_000))
        XCTAssertEqual(schedule.apply(.cancels(id: 3)), .cancelled(PlacementOpportunity(id: 3, kind: .adBreak, start: 7_000_000, duration: nil)))
        XCTAssertEqual(schedule.active?.end, 7_000_000, "a break on air that is called off ends at once")
    }

    /// A blackout ended by a command while its first fill still opens ends where it goes on air;
    /// one ended after it went on air ends where the command found the output.
    func testAnEndBeforeTheFillIsOnAirEndsTheBlackoutWhereItStarts() {
        var schedule = BreakSchedule()
        _ = schedule.apply(opens(1, at: 250_000, for: 30_000_000, kind: .blackout))
        XCTAssertNotNil(schedule.start(dueBy: 250_000))
        schedule.closeActive(at: 240_000, onAir: false)
        schedule.activeStarted(at: 290_000)
        XCTAssertEqual(schedule.active?.start, 290_000)
        XCTAssertEqual(schedule.active?.end, 290_000, "the end command is not undone by the start")
        _ = schedule.finishActive()

        _ = schedule.apply(opens(2, at: 1_000_000, for: 30_000_000, kind: .blackout))
        XCTAssertNotNil(schedule.start(dueBy: 1_000_000))
        schedule.activeStarted(at: 1_020_000)
        XCTAssertEqual(schedule.active?.end, 31_020_000)
        schedule.closeActive(at: 1_500_000)
        XCTAssertEqual(schedule.active?.end, 1_500_000)
    }
}
