import Foundation
import LivePush
import XCTest

/// Generated inputs: a still image with silence, and silence alone, pushed to nginx.
final class StillInputTests: NginxTestCase {
    private func push(_ input: sending any MediaInput, stream: String) async throws -> FFProbe {
        let pusher = LivePusher(config: PushHelpers.fastConfig())
        let events = pusher.events()
        try pusher.start(source: input, url: server.url(stream: stream))
        let run = try await PushHelpers.collect(pusher, events, start: .now, timeout: .seconds(30))
        XCTAssertNil(run.error, "\(run.eventNames)")
        return try FFProbe.run(try await server.awaitRecording(stream: stream))
    }

    func testAStillImageWithSilenceLastsItsDurationAtItsFrameRate() async throws {
        let image = TestMedia.mediaDirectory.appendingPathComponent("watermark.png").path
        let input = try StillInput(image: image, video: .init(width: 320, height: 180, frameRate: 5),
                                   audio: .init(sampleRate: 44_100, channels: 2), duration: .seconds(3))
        let probe = try await push(input, stream: "still")
        probe.assertWellFormed()
        XCTAssertEqual(probe.videoStream?.width, 320)
        XCTAssertEqual(probe.videoPackets.count, 15, "3 s at 5 fps")
        XCTAssertEqual(Double(probe.audioPackets.count * 1024) / 44_100, 3.0, accuracy: 0.1)
        let tones = try ToneAnalysis(recording: server.recordingPath(stream: "still"))
        XCTAssertLessThan(tones.peak, 0.001, "silence")
    }

    func testSilenceAloneIsAnAudioOnlyStream() async throws {
        let input = try StillInput(image: nil, video: .init(width: 2, height: 2, frameRate: 1),
                                   audio: .init(sampleRate: 48_000, channels: 1), duration: .seconds(2))
        let probe = try await push(input, stream: "silence")
        XCTAssertNil(probe.videoStream)
        XCTAssertEqual(probe.audioStream?.codecName, "aac")
        XCTAssertEqual(Double(probe.audioPackets.count * 1024) / 48_000, 2.0, accuracy: 0.1)
    }

    func testAMissingImageIsImageOpenFailed() {
        XCTAssertThrowsError(try StillInput(image: "/nonexistent.png", video: .init(width: 320, height: 180, frameRate: 5),
                                            audio: nil, duration: .seconds(1))) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .imageOpenFailed)
        }
    }
}
