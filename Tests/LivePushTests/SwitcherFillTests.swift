@testable import LivePush
import XCTest

/// A break's fills open on another thread (``OpeningInput``), never on the producer's: the
/// switcher asks for them and looks whether they are open. Here the test opens them, when it
/// chooses, and the clock is moved by hand.
final class SwitcherFillTests: XCTestCase {
    private let second: Int64 = 1_000_000

    /// Opens fills when the test says (or at once), and records what was asked for.
    final class ScriptedFills {
        let entry: ScriptedEntry
        var opensAtOnce = false
        /// The openings asked for (by position) that fail.
        var failing: Set<Int> = []
        private(set) var requested: [BreakFill] = []
        private(set) var openings: [OpeningInput] = []

        init(_ entry: ScriptedEntry) {
            self.entry = entry
        }

        func open(_ fill: BreakFill) -> OpeningInput {
            requested.append(fill)
            if failing.contains(requested.count - 1) {
                return OpeningInput(.failure(LivePushError(.mediaReadFailed, "fill \(requested.count - 1) cannot be opened")))
            }
            let opening = opensAtOnce ? OpeningInput(.success(entry.make())) : OpeningInput()
            openings.append(opening)
            return opening
        }

        /// The `index`th opening asked for is done.
        func finish(_ index: Int) {
            let entry = entry
            openings[index].open { entry.make() }
        }
    }

    /// A blackout window on the output timeline, filled by `fills`.
    private func blackout(at start: Int, for length: Int, fills: ScriptedFills, events: EventLog) -> BreakSetup {
        var options = BreakOptions()
        options.alternate = "alternate"
        options.blackouts = [BlackoutWindow(start: .position(.seconds(start)), duration: .seconds(length))]
        let director = BreakDirector(options: options, resolvers: ResolverRegistry(), upFrontCues: nil) { events.add($0.name) }
        director.prepare(wallClock: WallClockReading(wall: 0, monotonic: .zero))
        return BreakSetup(director: director, open: fills.open, report: { events.add("\($0)") })
    }

    func testABreakWaitsForItsFirstFillWithoutBlockingAndSplicesWhereItsWindowSays() throws {
        let clock = ManualMonotonicClock()
        let events = EventLog()
        let woken = EventLog()
        let fills = ScriptedFills(ScriptedEntry(name: 0xB, seconds: 10))
        let breaks = blackout(at: 2, for: 3, fills: fills, events: events)
        var switcher = Switcher.scripted(ScriptedSource(0xA, seconds: 8, gop: 5), pacing: .realTime, breaks: breaks,
                                         nextInputReady: { woken.add("woken") }, clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, into: &run)
        // The window fell due at 2 s; its fill is still opening: the switcher says so and returns.
        XCTAssertTrue(run.awaitingNextInput)
        XCTAssertEqual(fills.requested, [.alternate])
        XCTAssertEqual(run.videoRuns.map(\.input), [0xA])
        XCTAssertEqual(run.video.count, 50, "the main input up to the window, nothing past it")
        XCTAssertTrue(woken.names.isEmpty)
        fills.finish(0)
        XCTAssertEqual(woken.names, ["woken"], "the driver is told to step again")
        run.awaitingNextInput = false
        try switcher.run(clock, into: &run)
        XCTAssertTrue(run.finished)
        XCTAssertEqual(run.videoRuns.map(\.input), [0xA, 0xB, 0xA])
        let cut = try XCTUnwrap(run.packets(of: 0xB, .video).first)
        XCTAssertTrue(cut.isKeyframe)
        XCTAssertEqual(Double(cut.dts), Double(2 * second), accuracy: Double(ScriptedSource.audioFrame), "the splice, to the frame")
        let back = try XCTUnwrap(run.packets(of: 0xA, .video).first { $0.dts > cut.dts })
        XCTAssertEqual(back.data, [0xA, 0, 130], "the main input's first keyframe at or after the window's end (5.005 s)")
        XCTAssertLessThanOrEqual(SwitcherRun.largestStep(run.video), ScriptedSource.frame + 25_000, "no hole at either switch")
        XCTAssertEqual(events.names.filter { $0.hasPrefix("blackout") }, ["blackoutStarted", "blackoutEnded"])
    }

    func testAFirstFillThatCannotBeOpenedGivesWayToTheSlate() throws {
        let clock = ManualMonotonicClock()
        let events = EventLog()
        let fills = ScriptedFills(ScriptedEntry(name: 0x5, seconds: 10))
        fills.opensAtOnce = true
        fills.failing = [0]
        let breaks = blackout(at: 2, for: 1, fills: fills, events: events)
        var switcher = Switcher.scripted(ScriptedSource(0xA, seconds: 5), breaks: breaks, clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, into: &run)
        XCTAssertTrue(run.finished)
        XCTAssertEqual(Array(fills.requested.prefix(2)), [.alternate, .slate])
        XCTAssertEqual(run.videoRuns.map(\.input), [0xA, 0x5, 0xA])
        XCTAssertTrue(events.names.contains { $0.contains("fill 0 cannot be opened") }, "reported")
    }

    func testTheNextFillOpensAheadAndOneStillOpeningIsWaitedForWithoutBlocking() throws {
        let clock = ManualMonotonicClock()
        let events = EventLog()
        let woken = EventLog()
        // A 1 s alternate in a 3 s break: it plays again, each pass opened while the one before plays.
        let fills = ScriptedFills(ScriptedEntry(name: 0xB, seconds: 1))
        fills.opensAtOnce = true
        let breaks = blackout(at: 1, for: 3, fills: fills, events: events)
        var switcher = Switcher.scripted(ScriptedSource(0xA, seconds: 6), breaks: breaks, nextInputReady: { woken.add("woken") }, clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, packets: 25 + 47 + 10, into: &run)
        XCTAssertEqual(run.videoRuns.map(\.input), [0xA, 0xB])
        XCTAssertEqual(fills.requested, [.alternate, .alternate], "the next pass opens as soon as the first is on air")
        // The third pass is asked for when the second goes on air; it is still opening then.
        fills.opensAtOnce = false
        try switcher.run(clock, into: &run)
        XCTAssertTrue(run.awaitingNextInput, "the second pass ended; the third is not open yet")
        XCTAssertFalse(run.finished)
        XCTAssertEqual(fills.requested.count, 3)
        XCTAssertTrue(woken.names.isEmpty)
        fills.opensAtOnce = true  // the fourth pass, asked for when the third goes on air
        fills.finish(2)
        XCTAssertEqual(woken.names, ["woken"], "the driver is told to step again")
        run.awaitingNextInput = false
        try switcher.run(clock, into: &run)
        XCTAssertTrue(run.finished)
        XCTAssertEqual(run.videoRuns.map(\.input), [0xA, 0xB, 0xA])
        XCTAssertTrue(zip(run.video, run.video.dropFirst()).allSatisfy { $1.dts > $0.dts }, "video only moves forward")
        XCTAssertEqual(events.names.filter { $0.hasPrefix("blackout") }, ["blackoutStarted", "blackoutEnded"])
    }
}
