import Foundation
import LivePush
import Synchronization
import XCTest

/// Pausing a push of the app's frames shows the pause image, as pausing a file's push does: the
/// app's pictures are encoded by the push, so it can switch to the image and back on a keyframe.
final class FrameInputPauseTests: NginxTestCase {
    func testPausingTheAppsFramesShowsThePauseImage() async throws {
        let image = NSTemporaryDirectory() + "livepush-frames-pause-\(UUID().uuidString).png"
        defer { try? FileManager.default.removeItem(atPath: image) }
        let made = try ProcessRunner.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "color=c=0xD0D0D0:s=320x240",
                                                    "-frames:v", "1", "-y", image])
        XCTAssertTrue(made.succeeded, made.summary)

        var config = PushConfig()
        config.pacing = .realTime
        config.statsInterval = .zero
        config.pauseImage = image
        config.pauseImageFrameRate = 5
        let pusher = LivePusher(config: config)
        let counter = FrameCounterFilter()
        try pusher.addFilter(counter)
        let input = try FrameInput(video: .init(width: 320, height: 240, frameRate: 25),
                                   audio: .init(sampleRate: 44_100, channels: 2))
        // As fast as the push takes them: while paused, the app's sends wait for room.
        FrameInputTests.feed(input, seconds: 3, realTime: false)
        let events = pusher.events()
        try pusher.start(source: input, url: server.url(stream: "frames-paused"))
        let pausedFor = Mutex(0.0)
        let run = try await PushHelpers.collect(pusher, events, start: .now, timeout: .seconds(40)) { pusher in
            await counter.awaitFrame(25)
            try pusher.pause()
            let pausedAt = ContinuousClock.now
            // The pause's length is the input under test, not a synchronisation.
            try await Task.sleep(for: .seconds(1.5))
            let length = ContinuousClock.now - pausedAt
            try pusher.resume()
            pausedFor.withLock { $0 = Double(length.components.attoseconds) / 1e18 + Double(length.components.seconds) }
        }
        XCTAssertNil(run.error, "\(run.eventNames)")
        let seconds = pausedFor.withLock { $0 }

        let recording = try await server.awaitRecording(stream: "frames-paused")
        let probe = try FFProbe.run(recording)
        probe.assertWellFormed()
        let video = try DecodedVideo.luma(recording, width: 320, height: 240)
        let still = video.frames.indices.filter { video.deviation($0) < 4 && abs(video.mean($0, x: 0, y: 0, w: 320, h: 240) - 208) < 8 }
        let expected = Int((seconds * 5).rounded())
        print("paused for \(seconds) s: \(still.count) image frames (\(expected) expected), from frame \(still.first ?? -1)")
        XCTAssertEqual(still.count, expected, accuracy: 1, "\(seconds) s at 5 fps of the pause image, got \(still.count)")
        let first = try XCTUnwrap(still.first), last = try XCTUnwrap(still.last)
        XCTAssertEqual(still.count, last - first + 1, "the image frames are contiguous")
        XCTAssertEqual(video.frames.count, 75 + still.count, "every frame the app sent, and the image")
        XCTAssertEqual(counter.seen, 75, "the filters saw the app's frames, not the image")
        let packets = probe.videoPackets
        XCTAssertTrue(packets[first].isKeyframe, "the image starts on a keyframe")
        XCTAssertTrue(packets.indices.contains(last + 1) && packets[last + 1].isKeyframe, "the app's frames resume on a keyframe")
    }
}
