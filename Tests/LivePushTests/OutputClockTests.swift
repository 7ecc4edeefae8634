import XCTest
@testable import LivePush

final class OutputClockTests: XCTestCase {
    private let info = StreamInfo(
        video: VideoTrackInfo(width: 2, height: 2, frameRate: 25, bitrate: 0, decoderConfiguration: []),
        audio: AudioTrackInfo(sampleRate: 48_000, channels: 2, bitrate: 0, audioSpecificConfig: []),
        duration: 120_000)

    private func packet(_ kind: MediaPacket.Kind, _ dts: Int64, cts: Int64 = 0) -> MediaPacket {
        MediaPacket(kind: kind, data: [], dts: dts, pts: dts + cts, duration: kind == .video ? 40_000 : 21_333, importance: .key)
    }

    /// A B-frame pass: video decodes 80 ms before it presents; audio starts with the pictures.
    private func stampPass(_ clock: inout OutputClock, videoStart: Int64 = -80_000) -> (video: [MediaPacket], audio: [MediaPacket]) {
        var video: [MediaPacket] = [], audio: [MediaPacket] = []
        for i in 0..<3 { video.append(clock.stamp(packet(.video, videoStart + Int64(i) * 40_000, cts: 80_000))) }
        for i in 0..<5 { audio.append(clock.stamp(packet(.audio, videoStart + 80_000 + Int64(i) * 21_333))) }
        return (video, audio)
    }

    func testTheFirstSegmentStartsDecodingAtZeroAndKeepsAVAligned() {
        var clock = OutputClock(info: info)
        clock.beginSegment(start: MediaStart(presentation: 0, decode: -80_000))
        let (video, audio) = stampPass(&clock)
        XCTAssertEqual(video[0].dts, 0, "no negative timestamp")
        XCTAssertEqual(video[0].pts, 80_000, "composition offset survives")
        XCTAssertEqual(audio[0].pts, video[0].pts, "audio and pictures start together")
    }

    func testASwitchContinuesWhereThePresentationEndedWithNoGap() {
        var clock = OutputClock(info: info)
        clock.beginSegment(start: MediaStart(presentation: 0, decode: -80_000))
        _ = stampPass(&clock)
        let end = clock.end
        XCTAssertEqual(end, 80_000 + 40_000 * 3, "the last picture's pts + duration")
        // The same input again (a loop), then another whose timestamps start at 10 s.
        clock.beginSegment(start: MediaStart(presentation: 0, decode: -80_000))
        let (video, audio) = stampPass(&clock)
        XCTAssertEqual(video[0].pts, end, "the next pass presents right after the last")
        XCTAssertEqual(audio[0].pts, end, "both tracks move by the same amount")
        let secondEnd = clock.end
        clock.beginSegment()  // an input that does not know its start: its first packet says
        let late = clock.stamp(packet(.audio, 10_000_000))
        XCTAssertEqual(late.pts, secondEnd, "a late-starting input starts at once")
    }

    /// Raw sound decoded in whole blocks runs past the last picture at a switch: the next input
    /// starts where the pictures end (no hole in them; the sound encode cuts the overlap), but
    /// after copied sound, which nothing can cut.
    func testTheNextSegmentStartsWhereThePicturesEndWhenOnlyRawSoundRunsPast() throws {
        var clock = OutputClock(info: info)
        clock.beginSegment(start: MediaStart(presentation: 0, decode: 0))
        _ = clock.stamp(packet(.video, 0))  // pictures end at 40 ms
        let block = try AudioFrame(sampleRate: 48_000, channels: 2, sampleCount: 1024, timestamp: 30_000)
        _ = clock.stamp(.rawSound(block))  // sound ends at 51.3 ms
        XCTAssertEqual(clock.audioEnd, 30_000 + 21_333)
        XCTAssertEqual(clock.end, 40_000, "the pictures' end, not the raw sound's")
        clock.beginSegment(start: MediaStart(presentation: 0, decode: 0))
        XCTAssertEqual(clock.stamp(packet(.video, 0)).pts, 40_000, "the next input's first picture follows the last")

        var copied = OutputClock(info: info)
        copied.beginSegment(start: MediaStart(presentation: 0, decode: 0))
        _ = copied.stamp(packet(.video, 0))
        _ = copied.stamp(packet(.audio, 30_000))
        XCTAssertEqual(copied.end, 30_000 + 21_333, "copied sound is never overlapped")
    }

    func testDecodeTimeNeverGoesBackwardsPerTrackAndPresentationNeverPrecedesIt() {
        var clock = OutputClock(info: info)
        _ = clock.stamp(packet(.video, 80_000))
        let late = clock.stamp(packet(.video, 40_000, cts: 20_000))
        XCTAssertEqual(late.dts, 0, "clamped to the last video dts")
        XCTAssertEqual(late.pts, 0)
        XCTAssertEqual(clock.stamp(packet(.audio, -80_000)).dts, -160_000, "each track is clamped on its own")
    }

    func testTheWallClockAnchorsOnTheFirstPacketAndStopsWhilePaused() {
        var clock = OutputClock(info: info)
        XCTAssertEqual(clock.due(.zero, now: .microseconds(5_000_000)), .microseconds(5_000_000))
        XCTAssertEqual(clock.due(.seconds(1), now: .microseconds(5_100_000)), .microseconds(6_000_000))
        clock.pause(now: .microseconds(5_500_000))
        XCTAssertTrue(clock.isPaused)
        clock.resume(now: .microseconds(7_500_000))
        XCTAssertEqual(clock.due(.seconds(1), now: .microseconds(7_500_000)), .microseconds(8_000_000), "the 2 s paused are added")
    }

    /// A time of day (a blackout window at 10:00) is put on the output timeline by the clock,
    /// from the wall and monotonic times read together at the push's start: where the output is
    /// released at that instant. A pause moves it earlier by the pause; a clock step after the
    /// reading cannot move it.
    func testAWallClockTimeLandsWhereTheOutputIsReleasedThenAfterPauses() {
        let reading = WallClockReading(wall: 1_800_000_000_000_000, monotonic: .seconds(100))
        let tenOClock = reading.wall + 20_000_000
        var clock = OutputClock(info: info)
        XCTAssertEqual(clock.outputTime(ofWallTime: tenOClock, reading: reading), 20_000_000,
                       "before the first packet (and in --fast mode): output time 0 is the start")
        _ = clock.due(.zero, now: .seconds(101))
        XCTAssertEqual(clock.outputTime(ofWallTime: tenOClock, reading: reading), 19_000_000,
                       "the first packet went out 1 s after the start")
        clock.pause(now: .seconds(105))
        clock.resume(now: .seconds(110))
        XCTAssertEqual(clock.outputTime(ofWallTime: tenOClock, reading: reading), 14_000_000, "5 s paused")
    }

    func testWhatAnOutputSendsAgainFollowsTheLastTimestampByOneFrame() {
        XCTAssertEqual(OutputClock.resendOffset(lastSent: 9_960_000, step: 40_000, first: 8_000_000), 2_000_000)
    }
}
