import XCTest
@testable import LivePush

final class PlayoutTimelineTests: XCTestCase {
    private func clip(_ id: String, _ source: String, _ i: Double, _ o: Double) -> PlayoutSchedule.Clip {
        .init(id: id, source: source, in: i, out: o)
    }

    /// The issue's schedule.
    private var example: PlayoutSchedule {
        PlayoutSchedule(loop: .times(2), content: [clip("a", "A", 2, 8), clip("b", "B", 0, 4)], ads: [
            .init(clip: clip("x1", "X", 0, 2), type: .preroll, deleteAfterPlay: true),
            .init(clip: clip("y1", "Y", 0, 2), type: .midroll, at: 4, deleteAfterPlay: true),
            .init(clip: clip("x2", "X", 0, 1), type: .pod, appendTo: "y1", deleteAfterPlay: true),
            .init(clip: clip("y2", "Y", 0, 1), type: .midroll, at: 8, deleteAfterPlay: false),
            .init(clip: clip("x3", "X", 0, 1), type: .postroll),
        ])
    }

    private func run(_ timeline: inout PlayoutTimeline, limit: Int = 100) -> [String] {
        var out: [String] = []
        while out.count < limit, let e = timeline.next() {
            out.append("\(e.source) \(fmt(e.inPoint))-\(fmt(e.outPoint))")
        }
        return out
    }

    private func fmt(_ x: Double) -> String { x == x.rounded() ? String(Int(x)) : String(x) }

    func testTheIssuesScheduleComesOutInItsOrder() throws {
        var timeline = try PlayoutTimeline(schedule: example)
        XCTAssertEqual(run(&timeline), [
            "X 0-2", "A 2-6", "Y 0-2", "X 0-1", "A 6-8", "B 0-2", "Y 0-1", "B 2-4",
            "A 2-8", "B 0-2", "Y 0-1", "B 2-4", "X 0-1",
        ])
    }

    func testKindsAndBreaks() throws {
        var timeline = try PlayoutTimeline(schedule: example)
        let first = try XCTUnwrap(timeline.next())
        XCTAssertEqual(first.kind, .ad)
        XCTAssertEqual(first.adBreak, "preroll")
        XCTAssertEqual(timeline.next()?.kind, .content)
        XCTAssertEqual(timeline.next()?.adBreak, "y1")
        let pod = try XCTUnwrap(timeline.next())
        XCTAssertEqual(pod.kind, .pod)
        XCTAssertEqual(pod.adBreak, "y1", "a pod belongs to its parent's break")
    }

    func testAPodOfThreeAndAdsAtTheVeryStartAndEnd() throws {
        let schedule = PlayoutSchedule(content: [clip("a", "A", 0, 4)], ads: [
            .init(clip: clip("m0", "M", 0, 1), type: .midroll, at: 0),
            .init(clip: clip("p1", "P", 0, 1), type: .pod, appendTo: "m0"),
            .init(clip: clip("p2", "Q", 0, 1), type: .pod, appendTo: "p1"),
            .init(clip: clip("p3", "R", 0, 1), type: .pod, appendTo: "p2"),
            .init(clip: clip("m4", "N", 0, 1), type: .midroll, at: 4),
        ])
        var timeline = try PlayoutTimeline(schedule: schedule)
        XCTAssertEqual(run(&timeline), ["M 0-1", "P 0-1", "Q 0-1", "R 0-1", "A 0-4", "N 0-1"])
    }

    func testRepeatAdsComeBackEveryPassAndLoopForeverNeverEnds() throws {
        let schedule = PlayoutSchedule(loop: .forever, content: [clip("a", "A", 0, 2)], ads: [
            .init(clip: clip("pre", "P", 0, 1), type: .preroll),
            .init(clip: clip("once", "O", 0, 1), type: .midroll, at: 1, deleteAfterPlay: true),
        ])
        var timeline = try PlayoutTimeline(schedule: schedule)
        XCTAssertEqual(run(&timeline, limit: 9), ["P 0-1", "A 0-1", "O 0-1", "A 1-2", "P 0-1", "A 0-2", "P 0-1", "A 0-2", "P 0-1"])
    }

    func testScheduleNowCutsTheContentOrJoinsTheRunningBreak() throws {
        var timeline = try PlayoutTimeline(schedule: example)
        _ = timeline.next()  // X preroll
        XCTAssertFalse(timeline.scheduleNow(clip("now1", "N", 0, 1), interruptingAfter: 0.5), "joins the preroll break")
        XCTAssertEqual(timeline.next()?.id, "now1")
        XCTAssertEqual(timeline.next().map { "\($0.source) \($0.inPoint)-\($0.outPoint)" }, "A 2.0-6.0")
        XCTAssertTrue(timeline.scheduleNow(clip("now2", "N", 0, 1), interruptingAfter: 1.5), "content is cut now")
        XCTAssertEqual(run(&timeline, limit: 3), ["N 0-1", "A 3.5-6", "Y 0-2"], "content resumes from the cut")
    }

    func testBadSchedulesNameTheEntryAndTheField() {
        func refused(_ schedule: PlayoutSchedule) -> String {
            do {
                try schedule.validate()
                return "accepted"
            } catch {
                XCTAssertEqual(error.code, .scheduleInvalid)
                return error.detail ?? ""
            }
        }
        let content = [clip("a", "A", 0, 10)]
        XCTAssertEqual(refused(PlayoutSchedule(content: content, ads: [.init(clip: clip("p", "P", 0, 1), type: .pod, appendTo: "zz")])),
                       "entry \"p\", field \"appendTo\": names no ad (\"zz\")")
        XCTAssertTrue(refused(PlayoutSchedule(content: content, ads: [.init(clip: clip("m", "M", 0, 1), type: .midroll, at: 11)]))
            .hasPrefix("entry \"m\", field \"at\""))
        XCTAssertTrue(refused(PlayoutSchedule(content: [clip("a", "A", 5, 5)])).hasPrefix("entry \"a\", field \"out\""))
        XCTAssertTrue(refused(PlayoutSchedule(content: content, ads: [.init(clip: clip("m", "M", 0, 1), type: .midroll)]))
            .hasPrefix("entry \"m\", field \"at\""))
        XCTAssertTrue(refused(PlayoutSchedule(content: [])).contains("\"content\""))
        XCTAssertTrue(refused(PlayoutSchedule(content: content + [clip("a", "B", 0, 1)])).contains("used twice"))
        XCTAssertEqual(refused(example), "accepted")
    }
}
