@testable import LivePush
import XCTest

/// The HLS segmenter without I/O: cuts at keyframes once a segment is `hls_time` long, and at
/// every splice on its keyframe, announced ahead or twice, late or after the keyframe.
final class HLSSegmenterTests: XCTestCase {
    private let frame: Int64 = 40_000

    private func splice(_ id: UInt32, out: Bool = true, at time: Int64, duration: Int64? = 5_000_000) -> HLSSplice {
        HLSSplice(eventID: id, outOfNetwork: out, time: time, duration: out ? duration : nil, section: [0xFC])
    }

    /// Feeds `seconds` of 25 fps pictures with a keyframe every `gop` frames from `from` µs;
    /// returns the starts, in order.
    private func run(_ segmenter: inout HLSSegmenter, from: Int64 = 0, frames: Int, gop: Int,
                     keyframesAt extra: Set<Int> = [], before: (Int, inout HLSSegmenter) -> Void = { _, _ in }) -> [HLSSegmenter.Start] {
        var starts: [HLSSegmenter.Start] = []
        for index in 0..<frames {
            before(index, &segmenter)
            let pts = from + Int64(index) * frame
            if let start = segmenter.admit(isVideo: true, pts: pts, keyframe: index % gop == 0 || extra.contains(index)) {
                starts.append(start)
            }
            // Sound never starts a segment when there are pictures.
            XCTAssertNil(segmenter.admit(isVideo: false, pts: pts + 5_000, keyframe: true))
        }
        return starts
    }

    func testSegmentsEndAtTheFirstKeyframeOnceTheyAreHLSTimeLong() {
        var segmenter = HLSSegmenter(targetDuration: 2_000_000, hasVideo: true, frameDuration: frame)
        // Keyframes every 1 s: every other one ends a segment.
        let starts = run(&segmenter, frames: 250, gop: 25)
        XCTAssertEqual(starts.map(\.time), [0, 2, 4, 6, 8].map { Int64($0) * 1_000_000 })
        // Keyframes every 3 s with hls_time 2: a segment waits for the next keyframe, as FFmpeg's do.
        var long = HLSSegmenter(targetDuration: 2_000_000, hasVideo: true, frameDuration: frame)
        XCTAssertEqual(run(&long, frames: 250, gop: 75).map(\.time), [0, 3, 6, 9].map { Int64($0) * 1_000_000 })
    }

    func testASpliceStartsASegmentOnItsKeyframeWhateverTheLength() {
        var segmenter = HLSSegmenter(targetDuration: 2_000_000, hasVideo: true, frameDuration: frame)
        // A break at 3.2 s (a keyframe there, as the inputs make one), announced at 1 s, and its return at 4.4 s.
        let starts = run(&segmenter, frames: 200, gop: 50, keyframesAt: [80, 110]) { index, segmenter in
            if index == 25 { XCTAssertFalse(segmenter.receive(self.splice(7, at: 3_200_000))) }
            if index == 110 { XCTAssertFalse(segmenter.receive(self.splice(7, out: false, at: 4_400_000))) }
        }
        XCTAssertEqual(starts.map(\.time), [0, 2_000_000, 3_200_000, 4_400_000])
        XCTAssertEqual(starts[2].splices.map(\.eventID), [7])
        XCTAssertEqual(starts[2].splices.first?.outOfNetwork, true)
        XCTAssertEqual(starts[3].splices.first?.outOfNetwork, false)
        XCTAssertEqual(starts.map(\.lateBy), [0, 0, 0, 0])
        XCTAssertTrue(segmenter.pending.isEmpty)
    }

    func testABreakAnnouncedAheadAndAtTheSpliceStartsOneSegment() {
        var segmenter = HLSSegmenter(targetDuration: 2_000_000, hasVideo: true, frameDuration: frame)
        let starts = run(&segmenter, frames: 150, gop: 50, keyframesAt: [60]) { index, segmenter in
            // Ahead, from the schedule (2.38 s), then at the splice where the pictures are (2.4 s).
            if index == 10 { _ = segmenter.receive(self.splice(9, at: 2_380_000)) }
            if index == 60 { _ = segmenter.receive(self.splice(9, at: 2_400_000)) }
            if index == 61 { XCTAssertFalse(segmenter.receive(self.splice(9, at: 2_400_000)), "a third announcement is old news") }
        }
        XCTAssertEqual(starts.map(\.time), [0, 2_000_000, 2_400_000])
        XCTAssertEqual(starts[2].splices.count, 1)
        XCTAssertEqual(starts[2].splices.first?.time, 2_400_000, "the announcement at the splice counts")
    }

    func testACueThatComesJustAfterItsKeyframeJoinsTheSegmentThatKeyframeStarted() {
        var segmenter = HLSSegmenter(targetDuration: 2_000_000, hasVideo: true, frameDuration: frame)
        var attached = false
        _ = run(&segmenter, frames: 100, gop: 50) { index, segmenter in
            if index == 51 { attached = segmenter.receive(self.splice(3, at: 2_000_000)) }
        }
        XCTAssertTrue(attached)
        XCTAssertTrue(segmenter.pending.isEmpty)
    }

    func testACopiedSourceWithoutAKeyframeAtTheSpliceIsCutAtItsNextAndSaysHowLate() {
        var segmenter = HLSSegmenter(targetDuration: 4_000_000, hasVideo: true, frameDuration: frame)
        let starts = run(&segmenter, frames: 150, gop: 50) { index, segmenter in
            if index == 5 { _ = segmenter.receive(self.splice(4, at: 1_000_000)) }
        }
        // Keyframes at 0, 2, 4 s: the splice at 1 s goes to 2 s, 1 s late; the next segment at 6 s.
        XCTAssertEqual(starts.map(\.time), [0, 2_000_000])
        XCTAssertEqual(starts[1].lateBy, 1_000_000)
        XCTAssertEqual(starts[1].splices.map(\.eventID), [4])
    }

    func testAKeyframeWithinHalfAFrameOfTheSpliceIsAtTheSplice() {
        var segmenter = HLSSegmenter(targetDuration: 2_000_000, hasVideo: true, frameDuration: frame)
        let starts = run(&segmenter, frames: 50, gop: 100, keyframesAt: [30]) { index, segmenter in
            if index == 2 { _ = segmenter.receive(self.splice(1, at: 1_200_000 + 15_000)) }
        }
        XCTAssertEqual(starts.map(\.time), [0, 1_200_000])
        XCTAssertEqual(starts[1].lateBy, 0)
    }

    func testWithoutVideoEverySoundFrameMayStartASegment() {
        var segmenter = HLSSegmenter(targetDuration: 1_000_000, hasVideo: false, frameDuration: 21_333)
        var starts: [Int64] = []
        for index in 0..<200 {
            let pts = Int64(index) * 21_333
            if index == 10 { _ = segmenter.receive(splice(2, at: 500_000)) }
            if let start = segmenter.admit(isVideo: false, pts: pts, keyframe: false) { starts.append(start.time) }
        }
        // The splice at 0.5 s: the frame at 0.4907 s is within half a frame of it.
        XCTAssertEqual(starts, [0, 490_659, 1_493_310, 2_495_961, 3_498_612])
    }

    func testAStreamWithoutKeyframesIsCutAnywayAtTheLongestSegment() {
        var segmenter = HLSSegmenter(targetDuration: 2_000_000, hasVideo: true, frameDuration: frame)
        let starts = run(&segmenter, frames: 3_100, gop: 10_000)
        XCTAssertEqual(starts.map(\.time), [0, 60_000_000, 120_000_000])
        XCTAssertEqual(starts.map(\.forced), [false, true, true])
    }

    func testThePrerollAtTheStartJoinsTheFirstSegment() {
        var segmenter = HLSSegmenter(targetDuration: 2_000_000, hasVideo: true, frameDuration: frame)
        XCTAssertFalse(segmenter.receive(splice(1, at: 0, duration: 2_000_000)))
        let starts = run(&segmenter, frames: 100, gop: 50) { index, segmenter in
            if index == 50 { _ = segmenter.receive(self.splice(1, out: false, at: 2_000_000)) }
        }
        XCTAssertEqual(starts.map(\.time), [0, 2_000_000])
        XCTAssertEqual(starts[0].splices.map(\.outOfNetwork), [true])
        XCTAssertEqual(starts[1].splices.map(\.outOfNetwork), [false])
    }
}
