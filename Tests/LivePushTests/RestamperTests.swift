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

    func testLoopsContinueAfterTheLongestTrack() {
        var r = Restamper(info: info)
        for dts in [0, 40_000, 80_000] as [Int64] { _ = r.stamp(packet(.video, dts, cts: 80_000)) }
        _ = r.stamp(packet(.audio, 100_000))
        XCTAssertEqual(r.end, 121_333)
        r.beginNextPass()
        let first = r.stamp(packet(.video, 0, cts: 80_000))
        XCTAssertEqual(first.dts, 121_333)
        XCTAssertEqual(first.pts - first.dts, 80_000, "composition offset survives")
        XCTAssertEqual(r.stamp(packet(.audio, 0)).dts, 121_333)
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
