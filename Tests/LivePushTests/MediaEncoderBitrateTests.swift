import Foundation
@testable import LivePush
import XCTest

/// Adaptive bitrate reaches the real encoder: after the steps down, libx264's frames shrink.
/// (The push's producer hands each decision to its encode after the clock, ``VideoEncodeStage``.)
final class MediaEncoderBitrateTests: XCTestCase {
    func testSteppingDownShrinksTheEncodedFrames() throws {
        try XCTSkipUnless(MediaTestFiles.toolsAvailable, "ffmpeg/ffprobe not installed")
        let files = try MediaTestFiles()
        // 8 s of busy 320x240 video: noise keeps the encoder at whatever rate it is allowed.
        let path = try files.make("noisy.mp4", [
            "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=8", "-vf", "noise=alls=30:allf=t",
            "-c:v", "libx264", "-preset", "ultrafast", "-qp", "10",
        ])
        var options = MediaSourceOptions()
        options.encodeVideo = true
        options.videoBitrateKbps = 1600
        options.minVideoBitrateKbps = 200
        let stages = FrameStages()
        let source = try MediaInputFactory.open(path: path, options: options, stages: stages)
        let encode = try PictureEncode(source, stages: stages, adaptive: true)
        let stage = try XCTUnwrap(encode.stage, "the input yields pictures")

        func nextVideoBytes(_ frames: Int) throws -> Int {
            var bytes = 0, seen = 0
            while seen < frames, let packet = try source.nextPacket() {
                guard packet.kind == .video else { continue }
                for coded in try encode.process(packet) {
                    bytes += coded.data.count
                    seen += 1
                }
            }
            XCTAssertEqual(seen, frames)
            return bytes
        }

        _ = try nextVideoBytes(25)  // the first GOP's keyframe and the rate control settling
        let before = try nextVideoBytes(40)
        // Poor network: 1600 → 1120 → 784 → 549 → 384 → 269 → 200 kbit/s.
        var steps: [Int] = []
        if let rate = stages.adaptBitrate(isPoor: true, now: 0) { steps.append(rate) }
        for second in 1...10 {
            if let rate = stages.adaptBitrate(isPoor: nil, now: Int64(second) * 2_000_000) { steps.append(rate) }
        }
        XCTAssertEqual(steps, [1_120_000, 784_000, 549_000, 384_000, 269_000, 200_000])
        // What the push's producer does with each decision.
        stage.setBitrate(steps.last!)
        _ = try nextVideoBytes(25)  // the VBV buffer drains to the new rate
        let after = try nextVideoBytes(40)
        XCTAssertLessThan(Double(after), Double(before) / 4, "1600 → 200 kbit/s: \(before) → \(after) bytes per 40 frames")
        XCTAssertEqual(Double(after) * 8 / 1.6, 200_000, accuracy: 100_000, "about 200 kbit/s over 1.6 s")
    }
}
