import XCTest
@testable import LivePush

final class RestamperTests: XCTestCase {
    private let info = StreamInfo(
        video: VideoTrackInfo(width: 2, height: 2, frameRate: 25, bitrate: 0, decoderConfiguration: []),
        audio: AudioTrackInfo(sampleRate: 48_000, channels: 2, bitrate: 0, audioSpecificConfig: []),
        duration: 120_000)

    private func packet(_ kind: MediaPacket.Kind, _ dts: Int64, cts: Int64 = 0) -> MediaPacket {
        MediaPacket(kind: kind, data: [], dts: dts, pts: dts + cts, duration: kind == .video ? 40_000 : 21_333, importance: .key)
    }

    func testEachPassAdvancesByThePresentationSpan() {
        var r = Restamper(info: info)
        // Video with a 80 ms composition offset (B-frames), audio starting 20 ms in.
        for dts in [0, 40_000, 80_000] as [Int64] { _ = r.stamp(packet(.video, dts, cts: 80_000)) }
        for dts in [20_000, 41_333, 62_666, 83_999, 105_332, 126_665, 147_998] as [Int64] { _ = r.stamp(packet(.audio, dts)) }
        XCTAssertEqual(r.end, 200_000, "video's last pts + duration")
        r.beginNextPass()
        // Span = 200_000 - 20_000 (earliest pts, the audio).
        let video = r.stamp(packet(.video, 0, cts: 80_000))
        XCTAssertEqual(video.dts, 180_000)
        XCTAssertEqual(video.pts - video.dts, 80_000, "composition offset survives")
        XCTAssertEqual(r.stamp(packet(.audio, 20_000)).dts, 200_000, "audio continues where the pass ended")
    }

    func testTimestampsNeverGoBackwardsPerTrack() {
        var r = Restamper(info: info)
        _ = r.stamp(packet(.video, 80_000))
        let late = r.stamp(packet(.video, 40_000, cts: 40_000))
        XCTAssertEqual(late.dts, 80_000)
        XCTAssertEqual(late.pts, 120_000)
        XCTAssertEqual(r.stamp(packet(.audio, 0)).dts, 0, "tracks are independent")
    }
}
