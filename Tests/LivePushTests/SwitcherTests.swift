@testable import LivePush
import Synchronization
import XCTest

/// The switcher without sockets: synthetic inputs (``ScriptedSource``), commands, and a clock
/// moved by hand. What it delivers is checked by its stamps on the output clock.
final class SwitcherTests: XCTestCase {
    private let second: Int64 = 1_000_000

    // MARK: One input, loops

    func testOneInputGoesOutWholeOnTheOutputClockFromZero() throws {
        let clock = ManualMonotonicClock()
        let main = ScriptedSource(0xA, seconds: 2)
        var switcher = Switcher.scripted(main, clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, into: &run)
        XCTAssertTrue(run.finished)
        XCTAssertEqual(run.video.count, 50)
        XCTAssertEqual(run.audio.count, 94)
        XCTAssertEqual(run.video.first?.dts, 0)
        XCTAssertEqual(run.video.last?.dts, 49 * ScriptedSource.frame)
        XCTAssertTrue(run.headers.isEmpty, "the outputs announced this input's configuration")
        XCTAssertEqual(switcher.loopsCompleted, 1)
    }

    func testALoopContinuesTheTimestampsWhereBothTracksEnded() throws {
        let clock = ManualMonotonicClock()
        let main = ScriptedSource(0xA, seconds: 2)
        var switcher = Switcher.scripted(main, looping: .times(3), clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, into: &run)
        XCTAssertTrue(run.finished)
        XCTAssertEqual(main.rewinds, 2)
        XCTAssertEqual(switcher.loopsCompleted, 3)
        XCTAssertEqual(run.video.count, 150)
        XCTAssertTrue(zip(run.video, run.video.dropFirst()).allSatisfy { $1.dts > $0.dts }, "video only moves forward")
        // Pass two starts where the first pass's sound ended (94 frames of 1024 at 48 kHz).
        let firstPassEnd = 94 * ScriptedSource.audioFrame
        XCTAssertEqual(run.video[50].dts, firstPassEnd)
        XCTAssertEqual(run.audio[94].dts, firstPassEnd, "both tracks start the pass together")
        XCTAssertLessThanOrEqual(SwitcherRun.largestStep(run.video), ScriptedSource.frame + 6_000, "no hole at the loop")
        XCTAssertTrue(run.headers.isEmpty, "the same input again owes no sequence header")
    }

    func testAStopAsksBeforeTheInputStartsOver() throws {
        let clock = ManualMonotonicClock()
        var switcher = Switcher.scripted(ScriptedSource(0xA, seconds: 1), looping: .forever, clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, stopping: true, into: &run)
        XCTAssertTrue(run.finished)
        XCTAssertEqual(run.video.count, 25, "one pass, then the stop")
    }

    // MARK: Sequences

    func testAnEntryWithAnotherConfigurationOwesItsSequenceHeaderOnce() throws {
        let clock = ManualMonotonicClock()
        let sequence = ScriptedSequence([ScriptedEntry(name: 0xB, seconds: 1, video: [1, 0x4D]),
                                         ScriptedEntry(name: 0xC, seconds: 1, video: [1, 0x4D])])
        var switcher = Switcher.scripted(ScriptedSource(0xA, seconds: 1), sequence: sequence, clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, into: &run)
        XCTAssertEqual(run.videoRuns.map(\.input), [0xA, 0xB, 0xC])
        XCTAssertEqual(run.headers.count, 1, "B's video differs; its sound and all of C match what was sent")
        let (header, before) = try XCTUnwrap(run.headers.first)
        XCTAssertEqual(header.kind, .video)
        XCTAssertEqual(header.data, [1, 0x4D])
        XCTAssertEqual(before.data, [0xB, 0, 0], "before B's first picture")
        XCTAssertEqual(header.dts, before.dts)
    }

    func testPicturesGoOutAsThePushsEncodeAndACopyAfterThemWithItsOwnConfiguration() throws {
        let clock = ManualMonotonicClock()
        // B yields pictures: the push's encode after the clock, configured [1, 0x42], makes its video.
        let sequence = ScriptedSequence([ScriptedEntry(name: 0xB, seconds: 1, pictures: true),
                                         ScriptedEntry(name: 0xC, seconds: 1),
                                         ScriptedEntry(name: 0xD, seconds: 1, pictures: true)])
        var switcher = Switcher.scripted(ScriptedSource(0xA, seconds: 1), sequence: sequence, pictureConfiguration: [1, 0x42],
                                         clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, into: &run)
        XCTAssertEqual(run.videoRuns.map(\.input), [0xA, 0xB, 0xC, 0xD])
        XCTAssertEqual(run.headers.map(\.header.data), [[1, 0x42], [1, 0x64], [1, 0x42]],
                       "the encode's configuration before B's and D's pictures, A's again before C's copy")
        XCTAssertEqual(run.headers.map { $0.before.data.first }, [0xB, 0xC, 0xD])
    }

    func testAPushThatStartsOnPicturesOwesNoHeaderForMorePictures() throws {
        let clock = ManualMonotonicClock()
        let first = ScriptedSource(0xA, seconds: 1, pictures: true)
        var info = first.info
        info.video?.decoderConfiguration = [1, 0x42]  // what the outputs announced: the push's encode
        let sequence = ScriptedSequence([ScriptedEntry(name: 0xB, seconds: 1, pictures: true)])
        let setup = Switcher.Setup(pacing: .asFastAsPossible, sequence: sequence, pictureConfiguration: [1, 0x42],
                                   pacingGate: PacingGate(earlyRelease: 0))
        var switcher = Switcher(input: first, info: info, setup: setup, clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, into: &run)
        XCTAssertEqual(run.videoRuns.map(\.input), [0xA, 0xB])
        XCTAssertTrue(run.headers.isEmpty, "one encode makes every input's pictures")
    }

    func testASkipEndsTheEntryAndTheNextStartsWhereTheOutputEnds() throws {
        let clock = ManualMonotonicClock()
        let sequence = ScriptedSequence([ScriptedEntry(name: 0xB, seconds: 2)])
        var switcher = Switcher.scripted(ScriptedSource(0xA, seconds: 10), sequence: sequence, clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, packets: 40, into: &run)
        try switcher.send(.skip)
        try switcher.run(clock, into: &run)
        XCTAssertTrue(run.finished)
        XCTAssertEqual(run.videoRuns.map(\.input), [0xA, 0xB], "A is not heard of after the skip")
        XCTAssertEqual(run.packets(of: 0xB, .video).count, 50)
        XCTAssertEqual(sequence.skippedUnsent.count, 1)
        let lastA = try XCTUnwrap(run.packets(of: 0xA, .video).last), firstB = try XCTUnwrap(run.packets(of: 0xB, .video).first)
        let aEnd = max(lastA.pts + ScriptedSource.frame, try XCTUnwrap(run.packets(of: 0xA, .audio).last).pts + ScriptedSource.audioFrame)
        XCTAssertEqual(firstB.dts, aEnd, "B starts where A's media ends")
    }

    func testTheNextEntryStillOpeningIsWaitedForWithoutBlockingAndWakesTheDriver() throws {
        let clock = ManualMonotonicClock()
        let sequence = ScriptedSequence([ScriptedEntry(name: 0xB, seconds: 1)])
        sequence.holdNextEntry()
        let woken = EventLog()
        var switcher = Switcher.scripted(ScriptedSource(0xA, seconds: 1), sequence: sequence,
                                         nextInputReady: { woken.add("woken") }, clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, into: &run)
        XCTAssertTrue(run.awaitingNextInput, "A ended; B is not open yet")
        XCTAssertFalse(run.finished)
        XCTAssertEqual(run.videoRuns.map(\.input), [0xA])
        XCTAssertTrue(woken.names.isEmpty)
        sequence.open()
        XCTAssertEqual(woken.names, ["woken"], "the driver is told to step again")
        try switcher.run(clock, into: &run)
        XCTAssertTrue(run.finished)
        XCTAssertEqual(run.videoRuns.map(\.input), [0xA, 0xB])
        XCTAssertEqual(run.packets(of: 0xB, .video).first?.dts, 47 * ScriptedSource.audioFrame, "B starts where A's 47 sound frames end")
    }

    func testAnEntryThatFailsMidwayIsReplacedByItsStandIn() throws {
        let clock = ManualMonotonicClock()
        let sequence = ScriptedSequence([ScriptedEntry(name: 0xB, seconds: 2, failAt: 60)],
                                        standIn: ScriptedEntry(name: 0x5, seconds: 1, video: [1, 0x42]))
        var switcher = Switcher.scripted(ScriptedSource(0xA, seconds: 1), sequence: sequence, clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, into: &run)
        XCTAssertTrue(run.finished)
        XCTAssertEqual(run.videoRuns.map(\.input), [0xA, 0xB, 0x5])
        XCTAssertEqual(run.headers.map(\.header.data), [[1, 0x42]], "the stand-in's configuration goes out first")
    }

    func testTheCuesOfAnEntryGoOutBeforeThePacketTheyAreDueBy() throws {
        let clock = ManualMonotonicClock()
        let sequence = ScriptedSequence([ScriptedEntry(name: 0xB, seconds: 1)]) { start in
            [AdCue(eventID: 7, outOfNetwork: true, spliceTime: start, duration: nil, sendAt: start)]
        }
        var switcher = Switcher.scripted(ScriptedSource(0xA, seconds: 1), sequence: sequence, clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, packets: 30, into: &run)
        XCTAssertEqual(run.cues.map(\.eventID), [7], "the first input's own cue, due at 0")
        try switcher.run(clock, into: &run)
        XCTAssertEqual(run.cues.map(\.eventID), [7, 7])
        XCTAssertEqual(run.cues.last?.sendAt, run.packets(of: 0xB, .audio).first?.dts, "at B's splice")
    }

    // MARK: Paces

    func testRealTimeWaitsUntilEachPacketIsDueAndNeverReleasesItLate() throws {
        let clock = ManualMonotonicClock()
        let origin = clock.now().microseconds
        var switcher = Switcher.scripted(ScriptedSource(0xA, seconds: 2), pacing: .realTime, clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, into: &run)
        XCTAssertTrue(run.finished)
        XCTAssertGreaterThan(run.waits.count, 15, "a wait per 100 ms batch")
        XCTAssertTrue(run.waits.allSatisfy { $0 != nil }, "only pauses wait for a command")
        for (packet, at) in run.delivered {
            XCTAssertEqual(packet.due, origin + packet.dts, "due on the wall clock anchored at the first packet")
            XCTAssertLessThanOrEqual(at.microseconds, packet.due, "never late on a clock that waits exactly")
            XCTAssertLessThanOrEqual(packet.due - at.microseconds, PacingGate.batch, "at most one batch early")
        }
        XCTAssertGreaterThanOrEqual(clock.now().microseconds - origin, 2 * second - PacingGate.batch - ScriptedSource.frame)
    }

    func testFastPaceNeverWaitsForTheClockButWaitsForRoom() throws {
        let clock = ManualMonotonicClock()
        let start = clock.now()
        var switcher = Switcher.scripted(ScriptedSource(0xA, seconds: 2), clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, hasRoom: { false }, into: &run)
        XCTAssertEqual(run.roomWaits, 1)
        XCTAssertTrue(run.delivered.isEmpty)
        try switcher.run(clock, into: &run)
        XCTAssertTrue(run.finished)
        XCTAssertEqual(run.delivered.count, 144, "the packet that waited for room was not lost")
        XCTAssertEqual(run.delivered.first?.packet.dts, 0)
        XCTAssertTrue(run.waits.isEmpty)
        XCTAssertEqual(clock.now(), start)
        XCTAssertTrue(run.delivered.allSatisfy { $0.packet.due == .min }, "nothing is due in --fast")
    }

    func testAPauseStopsTheClockAndResumeContinuesTheTimestamps() throws {
        let clock = ManualMonotonicClock()
        let origin = clock.now().microseconds
        var switcher = Switcher.scripted(ScriptedSource(0xA, seconds: 2), pacing: .realTime, clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, packets: 40, into: &run)
        try switcher.send(.pause)
        XCTAssertTrue(switcher.isPaused)
        try switcher.run(clock, into: &run)
        XCTAssertEqual(run.waits.last, .some(nil), "paused: nothing goes until a command")
        XCTAssertEqual(run.delivered.count, 40)
        clock.advance(by: .seconds(5))
        try switcher.send(.resume)
        try switcher.run(clock, into: &run)
        XCTAssertTrue(run.finished)
        XCTAssertEqual(run.delivered.count, 144)
        for (index, delivered) in run.delivered.enumerated() {
            let shift = index < 40 ? 0 : 5 * second
            XCTAssertEqual(delivered.packet.due - delivered.packet.dts, origin + shift, "packet \(index)")
        }
        XCTAssertEqual(SwitcherRun.largestStep(run.video), ScriptedSource.frame, "the media has no hole where the push paused")
    }

    // MARK: Slate

    func testTheSlateGoesOnAirAndTheInputComesBackOnItsNextKeyframe() throws {
        let clock = ManualMonotonicClock()
        let slate = ScriptedSource(0x5, seconds: 10, video: [1, 0x42], audio: [0x12, 0x10])
        var switcher = Switcher.scripted(ScriptedSource(0xA, seconds: 4), slate: slate, clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, packets: 30, into: &run)
        try switcher.send(.showSlate)
        try switcher.run(clock, packets: 60, into: &run)
        try switcher.send(.leaveSlate)
        try switcher.run(clock, into: &run)
        XCTAssertTrue(run.finished)
        XCTAssertEqual(run.videoRuns.map(\.input), [0xA, 0x5, 0xA])
        XCTAssertEqual(run.headers.map(\.header.data), [[0x12, 0x10], [1, 0x42], [0x11, 0x90], [1, 0x64]],
                       "each switch announces the configuration that changed, on both tracks, before each one's first packet")
        XCTAssertTrue(run.headers.allSatisfy { $0.header.kind == $0.before.kind && $0.header.dts == $0.before.dts })
        let back = run.packets(of: 0xA, .video).drop { $0.data[2] < 20 }
        XCTAssertTrue(try XCTUnwrap(back.first).isKeyframe)
        XCTAssertEqual(back.first?.data, [0xA, 0, 25], "the copy resumes at its next keyframe, where it stood")
        XCTAssertTrue(zip(run.video, run.video.dropFirst()).allSatisfy { $1.dts > $0.dts })
        let audio = run.audio
        XCTAssertTrue(zip(audio, audio.dropFirst()).allSatisfy { $1.dts >= $0.dts })
        let mainSound = run.packets(of: 0xA, .audio).map { $0.data }
        XCTAssertEqual(Set(mainSound.map { $0 }).count, mainSound.count, "no sound of the input went out twice")
    }

    func testASlateThatEndsHoldsUntilItIsLeft() throws {
        let clock = ManualMonotonicClock()
        var switcher = Switcher.scripted(ScriptedSource(0xA, seconds: 2), slate: ScriptedSource(0x5, seconds: 1), clock: clock)
        var run = SwitcherRun()
        try switcher.send(.showSlate)
        try switcher.run(clock, into: &run)
        XCTAssertTrue(run.idle, "the slate ended: nothing to send, and the push goes on")
        XCTAssertFalse(run.finished)
        XCTAssertEqual(run.videoRuns.map(\.input), [0x5])
        try switcher.send(.leaveSlate)
        try switcher.run(clock, into: &run)
        XCTAssertTrue(run.finished)
        XCTAssertEqual(run.videoRuns.map(\.input), [0x5, 0xA])
        XCTAssertEqual(run.packets(of: 0xA, .video).count, 50, "the input was on air for none of it: all of it follows")
    }

    // MARK: Blackouts
    func testKeyframeRequestsGoToTheInputOnAirAndBitratesToTheMainOneUnderASlate() throws {
        let clock = ManualMonotonicClock()
        let main = ScriptedSource(0xA, seconds: 4), slate = ScriptedSource(0x5, seconds: 4)
        var switcher = Switcher.scripted(main, slate: slate, clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, packets: 10, into: &run)
        try switcher.send(.requestKeyframe)
        switcher.setVideoBitrate(800_000)
        try switcher.send(.showSlate)
        try switcher.run(clock, packets: 10, into: &run)
        try switcher.send(.requestKeyframe)
        switcher.setVideoBitrate(600_000)
        XCTAssertEqual(main.keyframeRequests, [.min])
        XCTAssertEqual(slate.keyframeRequests, [.min], "the slate was on air for the second")
        XCTAssertEqual(main.bitrates, [800_000, 600_000], "the main input's encoder, even under the slate")
        XCTAssertTrue(slate.bitrates.isEmpty)
    }

    func testABlackoutAsksTheMainInputForAKeyframeWhereItEnds() throws {
        let clock = ManualMonotonicClock()
        let main = ScriptedSource(0xA, seconds: 8)
        let breaks = blackout(at: 2, for: 3, alternate: ScriptedEntry(name: 0xB, seconds: 10), events: EventLog())
        var switcher = Switcher.scripted(main, breaks: breaks, clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, into: &run)
        let asked = try XCTUnwrap(main.keyframeRequests.first)
        XCTAssertEqual(Double(asked), 5e6, accuracy: Double(ScriptedSource.audioFrame), "the window's end on the main input's timeline")
    }


    /// A blackout window on the output timeline, filled by the alternate input `alternate`.
    private func blackout(at start: Int, for length: Int, alternate: ScriptedEntry, events: EventLog) -> BreakSetup {
        var options = BreakOptions()
        options.alternate = "alternate"
        options.blackouts = [BlackoutWindow(start: .position(.seconds(start)), duration: .seconds(length))]
        let director = BreakDirector(options: options, resolvers: ResolverRegistry(), upFrontCues: nil) { events.add($0.name) }
        director.prepare(wallClock: WallClockReading(wall: 0, monotonic: .zero))
        return BreakSetup(director: director, open: { _ in OpeningInput(.success(alternate.make())) }, report: { events.add("\($0)") })
    }

    /// A window's length counts from where the output stood at the cut; the main input (a
    /// copy, a keyframe every 200 ms) comes back on its first keyframe from there.
    func testABlackoutCutsToTheAlternateOnAKeyframeAndReturnsOnTheMainInputsKeyframe() throws {
        let clock = ManualMonotonicClock()
        let events = EventLog()
        let breaks = blackout(at: 2, for: 3, alternate: ScriptedEntry(name: 0xB, seconds: 10, video: [1, 0x4D]), events: events)
        var switcher = Switcher.scripted(ScriptedSource(0xA, seconds: 8, gop: 5), pacing: .realTime, breaks: breaks, clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, into: &run)
        XCTAssertTrue(run.finished)
        XCTAssertEqual(run.videoRuns.map(\.input), [0xA, 0xB, 0xA])
        XCTAssertEqual(events.names.filter { $0.hasPrefix("blackout") }, ["blackoutStarted", "blackoutEnded"])
        let alternate = run.packets(of: 0xB, .video), main = run.packets(of: 0xA, .video)
        XCTAssertEqual(main.filter { $0.dts < 2 * second }.count, 50, "the main input up to the window")
        let cut = try XCTUnwrap(alternate.first)
        XCTAssertTrue(cut.isKeyframe)
        XCTAssertEqual(Double(cut.dts), Double(2 * second), accuracy: Double(ScriptedSource.audioFrame), "where both tracks ended at 2 s")
        let back = try XCTUnwrap(main.first { $0.dts > 2 * second })
        XCTAssertTrue(back.isKeyframe)
        XCTAssertEqual(back.data, [0xA, 0, 130], "the main input's first keyframe at or after the window's end (5.005 s)")
        XCTAssertEqual(Double(back.dts), 5.2e6, accuracy: Double(ScriptedSource.frame))
        XCTAssertLessThanOrEqual(SwitcherRun.largestStep(run.video), 2 * ScriptedSource.frame, "no picture missing at either cut")
        XCTAssertEqual(run.headers.map(\.header.data), [[1, 0x4D], [1, 0x64]], "the alternate's configuration, then the main one's again")
    }

    func testAnEndCommandReturnsOnTheMainInputsNextKeyframe() throws {
        let clock = ManualMonotonicClock()
        let events = EventLog()
        let breaks = blackout(at: 1, for: 60, alternate: ScriptedEntry(name: 0xB, seconds: 10), events: events)
        var switcher = Switcher.scripted(ScriptedSource(0xA, seconds: 8), breaks: breaks, clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, packets: 150, into: &run)
        XCTAssertEqual(run.videoRuns.map(\.input), [0xA, 0xB])
        try switcher.send(.endBlackout)
        try switcher.run(clock, into: &run)
        XCTAssertEqual(run.videoRuns.map(\.input), [0xA, 0xB, 0xA])
        let back = try XCTUnwrap(run.packets(of: 0xA, .video).first { $0.dts > second })
        XCTAssertTrue(back.isKeyframe)
        XCTAssertEqual(Int(back.data[2]) % 25, 0, "the main input's own keyframe")
        XCTAssertLessThanOrEqual(back.dts - (try XCTUnwrap(run.packets(of: 0xB, .video).last).dts), ScriptedSource.frame)
    }

    /// The bound for the cued blackout in `--fast` (source 0–6 s, alternate 6–11 s, then
    /// the source): no video gap over 100 ms, no audio gap over 60 ms, the source back within
    /// 0.25 s of 11 s (its keyframes are 200 ms apart). `audioLead`: how far ahead of its
    /// pictures each input's sound is read (a file's interleaving, an encoder's delay).
    private func checkFastBlackoutReturn(audioLead: Int64) throws {
        let clock = ManualMonotonicClock()
        let events = EventLog()
        let alternate = ScriptedEntry(name: 0xB, seconds: 20, video: [1, 0x4D], audioLead: audioLead)
        let breaks = blackout(at: 6, for: 5, alternate: alternate, events: events)
        var switcher = Switcher.scripted(ScriptedSource(0xA, seconds: 15, gop: 5, audioLead: audioLead), breaks: breaks, clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, into: &run)
        XCTAssertTrue(run.finished)
        XCTAssertEqual(run.videoRuns.map(\.input), [0xA, 0xB, 0xA])
        for (kind, bound) in [(MediaPacket.Kind.video, Int64(100_000)), (.audio, 60_000)] {
            let packets = kind == .video ? run.video : run.audio
            for (before, after) in zip(packets, packets.dropFirst()) where after.dts - before.dts > bound {
                XCTFail("\(kind) gap of \(after.dts - before.dts) µs at \(Double(before.dts) / 1e6) s (input \(before.data[0]) → \(after.data[0]))")
            }
        }
        let back = try XCTUnwrap(run.packets(of: 0xA, .video).first { $0.dts > 6 * second })
        XCTAssertEqual(Double(back.dts) / 1e6, 11, accuracy: 0.25, "the source comes back at 11 s")
    }

    func testTheFastBlackoutReturnLeavesNoGap() throws {
        try checkFastBlackoutReturn(audioLead: 0)
    }

    func testTheFastBlackoutReturnLeavesNoGapWhenTheSoundIsReadAheadOfThePictures() throws {
        try checkFastBlackoutReturn(audioLead: 160_000)
    }
}

/// Break events, as the director emits them (from any thread).
final class EventLog: Sendable {
    private let events = Mutex<[String]>([])

    func add(_ name: String) { events.withLock { $0.append(name) } }
    var names: [String] { events.withLock { $0 } }
}
