@testable import LivePush
import XCTest

/// Failover as the switcher sees it. A live input's failover (the primary feed lost, the backup
/// or the slate standing in, the primary back) happens inside the input: ``FailoverInput`` and
/// its ``FailoverStateMachine`` put every picture, the primary's or a stand-in's, into one
/// encode on the input's own frame slots. So for the switcher it is no switch at all: one
/// input, one segment, one configuration. These tests hold the switcher to that, and show why
/// the re-timing must stay in the input: a timeline that jumps back inside one input is only
/// clamped, never re-anchored.
final class SwitcherFailoverTests: XCTestCase {
    private let second: Int64 = 1_000_000

    /// A failover input's output: the primary (0xA) for 2 s, the backup (0xB) from its keyframe
    /// at 2 s, the primary again from 4 s to 6 s, on one continuous timeline (frame slots).
    private func failover(restartingAt restart: Int64? = nil) -> SplicedSource {
        SplicedSource(parts: [(0xA, 0, 2), (0xB, 2, 2), (0xA, restart ?? 4, 2)])
    }

    func testAFailoverInsideTheInputGoesOutAsOneSegmentAtFastPace() throws {
        let clock = ManualMonotonicClock()
        var switcher = Switcher.scripted(failover(), pacing: .asFastAsPossible, clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, into: &run)
        XCTAssertTrue(run.finished)
        XCTAssertEqual(run.videoRuns.map(\.input), [0xA, 0xB, 0xA], "main, backup at the main's loss, main back")
        XCTAssertEqual(run.videoRuns.map(\.frames), [50, 50, 50])
        XCTAssertEqual(run.video.map(\.dts), (0..<150).map { Int64($0) * ScriptedSource.frame }, "no gap, no jump")
        XCTAssertTrue(run.headers.isEmpty, "one encode: no configuration changes at a failover")
        XCTAssertEqual(run.waits.count, 0, "--fast never waits for the clock")
        let backup = try XCTUnwrap(run.packets(of: 0xB, .video).first)
        XCTAssertTrue(backup.isKeyframe, "the backup starts on a keyframe")
        XCTAssertEqual(backup.dts, 2 * second)
    }

    func testAFailoverInsideTheInputIsPacedLikeAnyPictureInRealTime() throws {
        let clock = ManualMonotonicClock()
        let origin = clock.now().microseconds
        var switcher = Switcher.scripted(failover(), pacing: .realTime, clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, into: &run)
        XCTAssertTrue(run.finished)
        XCTAssertEqual(run.videoRuns.map(\.input), [0xA, 0xB, 0xA])
        // The backup's pictures and the main's return are due like any other, on one anchor.
        for (packet, at) in run.delivered {
            XCTAssertEqual(packet.due, origin + packet.dts)
            XCTAssertLessThanOrEqual(at.microseconds, packet.due, "never late on a clock that waits exactly")
            XCTAssertLessThanOrEqual(packet.due - at.microseconds, PacingGate.batch, "at most one batch early")
        }
        let back = try XCTUnwrap(run.packets(of: 0xA, .video).first { $0.dts >= 4 * second })
        XCTAssertEqual(back.due, origin + 4 * second, "the main's return is due where its slot is")
        XCTAssertGreaterThanOrEqual(clock.now().microseconds - origin, 6 * second - PacingGate.batch - ScriptedSource.frame)
    }

    /// A primary that comes back as a new publish restarts its timestamps (here at 0). Were the
    /// input to hand that on, the switcher would not re-anchor it (no switch happened): the
    /// output clock only clamps, so the time never goes back, but the pictures pile up on one
    /// timestamp. That is why ``FailoverInput`` re-times every picture onto its own slots.
    func testATimelineThatJumpsBackInsideOneInputIsClampedNotReanchored() throws {
        let clock = ManualMonotonicClock()
        var switcher = Switcher.scripted(failover(restartingAt: 0), pacing: .asFastAsPossible, clock: clock)
        var run = SwitcherRun()
        try switcher.run(clock, into: &run)
        XCTAssertTrue(zip(run.video, run.video.dropFirst()).allSatisfy { $1.dts >= $0.dts }, "decode time never goes back")
        let returned = run.packets(of: 0xA, .video).filter { $0.dts >= 4 * second - ScriptedSource.frame }
        XCTAssertGreaterThan(returned.count, 1)
        XCTAssertEqual(Set(returned.prefix(10).map(\.dts)).count, 1, "clamped onto the last time, not re-anchored")
    }
}

/// One input whose parts come from different sources, as a failover input's output does:
/// `(name, start s, seconds)` each, 25 fps video (a keyframe a second) and 48 kHz sound, on the
/// timeline each part says, in decode order within each part.
final class SplicedSource: MediaInput {
    let info: StreamInfo
    private var packets: [MediaPacket]

    init(parts: [(name: UInt8, start: Int64, seconds: Int)]) {
        let first = ScriptedSource(parts[0].name, seconds: parts[0].seconds)
        info = first.info
        packets = []
        for part in parts {
            let source = ScriptedSource(part.name, seconds: part.seconds, startingAt: part.start * 1_000_000)
            // Not I/O: a scripted source reads an array. Its only error is a scripted failure, never set here.
            while let packet = try? source.nextPacket() { packets.append(packet) }
        }
    }

    var start: MediaStart? { nil }
    var readsWithoutWaiting: Bool { true }

    func nextPacket() throws(LivePushError) -> MediaPacket? {
        packets.isEmpty ? nil : packets.removeFirst()
    }

    func rewind() throws(LivePushError) {
        throw LivePushError(.invalidState, "a live input is not rewound")
    }

    func suspend() throws(LivePushError) -> [MediaPacket] { [] }
    func setVideoBitrate(_ bitsPerSecond: Int) {}
    func requestKeyframe(atOrAfter time: Int64) {}
    func interrupt() {}
}
