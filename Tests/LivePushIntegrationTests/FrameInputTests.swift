import Foundation
import LivePush
import XCTest

/// Frames that Swift code generates (a moving bar and a 440 Hz tone), handed to a push through
/// ``FrameInput``, arrive at nginx as H.264/AAC: every frame, at the right rate, with the tone.
final class FrameInputTests: NginxTestCase {
    private static let size = (width: 320, height: 240)
    private static let sampleRate = 44_100

    /// A picture with a white bar at a position that moves with `index`.
    private static func picture(_ index: Int, timestamp: Int64) throws -> VideoFrame {
        var frame = try VideoFrame(width: size.width, height: size.height, timestamp: timestamp)
        let stride = frame.stride(ofPlane: 0)
        try frame.withMutablePlane(0) { luma in
            for y in 0..<size.height {
                for x in 0..<size.width {
                    luma[y * stride + x] = abs(x - (index * 8) % size.width) < 8 ? 235 : 16
                }
            }
        }
        return frame
    }

    /// 1024 samples of a 440 Hz sine (amplitude 0.5) in both channels, from sample `first` on.
    private static func tone(first: Int, timestamp: Int64) throws -> AudioFrame {
        var frame = try AudioFrame(sampleRate: sampleRate, channels: 2, sampleCount: 1024, timestamp: timestamp)
        for channel in 0..<2 {
            try frame.withMutableChannel(channel) { samples in
                for i in 0..<1024 {
                    samples[i] = 0.5 * Float(sin(2 * Double.pi * 440 * Double(first + i) / Double(sampleRate)))
                }
            }
        }
        return frame
    }

    /// Feeds `seconds` of 25 fps video and matching audio on a thread of its own, in timestamp
    /// order; with `realTime`, at the pace a camera and a microphone would deliver them.
    static func feed(_ input: FrameInput, seconds: Int, realTime: Bool) {
        let thread = Thread {
            let start = Date()
            var audioSamples = 0
            for index in 0..<(seconds * 25) {
                let videoTime = Int64(index) * 40_000
                while Int64(audioSamples) * 1_000_000 / Int64(sampleRate) <= videoTime {
                    let t = Int64(audioSamples) * 1_000_000 / Int64(sampleRate)
                    try? input.send(tone(first: audioSamples, timestamp: t))
                    audioSamples += 1024
                }
                if realTime {
                    // The generator's own clock: a camera delivers a frame every 40 ms.
                    let due = start.addingTimeInterval(Double(videoTime) / 1_000_000)
                    if due > Date() { Thread.sleep(until: due) }
                }
                try? input.send(picture(index, timestamp: videoTime))
            }
            input.finish()
        }
        thread.start()
    }

    private func push(_ input: FrameInput, stream: String, pacing: PushConfig.Pacing,
                      filters: [any VideoFilter] = []) async throws -> FFProbe {
        var config = PushConfig()
        config.pacing = pacing
        config.statsInterval = .zero
        let pusher = LivePusher(config: config)
        for filter in filters { try pusher.addFilter(filter) }
        let events = pusher.events()
        try pusher.start(source: input, url: server.url(stream: stream))
        let run = try await PushHelpers.collect(pusher, events, start: .now, timeout: .seconds(40))
        XCTAssertNil(run.error, "\(run.eventNames)")
        let path = try await server.awaitRecording(stream: stream)
        let tones = try ToneAnalysis(recording: path)
        XCTAssertGreaterThan(tones.level(440, from: 0.5, to: tones.seconds - 0.5), 0.2, "the 440 Hz tone arrived")
        XCTAssertLessThan(tones.level(1000, from: 0.5, to: tones.seconds - 0.5), 0.02)
        return try FFProbe.run(path)
    }

    func testAppTimestampsGiveEveryFrameAtTheRightRate() async throws {
        let input = try FrameInput(video: .init(width: 320, height: 240, frameRate: 25),
                                   audio: .init(sampleRate: Self.sampleRate, channels: 2))
        Self.feed(input, seconds: 4, realTime: false)
        let probe = try await push(input, stream: "frames", pacing: .asFastAsPossible)
        probe.assertWellFormed()
        XCTAssertEqual(probe.videoStream?.codecName, "h264")
        XCTAssertEqual(probe.videoStream?.width, 320)
        XCTAssertEqual(probe.audioStream?.codecName, "aac")
        XCTAssertEqual(probe.videoPackets.count, 100, "every frame")
        let dts = probe.videoPackets.compactMap(\.dtsTime)
        let steps = zip(dts, dts.dropFirst()).map { $1 - $0 }
        XCTAssertEqual(steps.min() ?? 0, 0.04, accuracy: 0.0015)
        XCTAssertEqual(steps.max() ?? 0, 0.04, accuracy: 0.0015, "25 fps throughout")
        XCTAssertEqual(Double(probe.audioPackets.count * 1024) / Double(Self.sampleRate), 4.0, accuracy: 0.1)
    }

    /// The app's frames go through the push's filters, as a file's decoded pictures do: a
    /// counting filter sees every frame, and every picture nginx recorded shows the
    /// checkerboard a second filter painted.
    func testTheAppsFramesGoThroughTheFilters() async throws {
        let input = try FrameInput(video: .init(width: 320, height: 240, frameRate: 25),
                                   audio: .init(sampleRate: Self.sampleRate, channels: 2))
        Self.feed(input, seconds: 4, realTime: false)
        let counter = FrameCounterFilter()
        let probe = try await push(input, stream: "filtered", pacing: .asFastAsPossible, filters: [counter, CheckerboardFilter()])
        XCTAssertEqual(probe.videoPackets.count, 100, "every frame")
        XCTAssertEqual(counter.seen, 100, "the filter saw every frame the app sent")
        let video = try DecodedVideo.luma(try await server.awaitRecording(stream: "filtered"), width: 320, height: 240)
        XCTAssertEqual(video.frames.count, 100)
        let painted = video.frames.indices.filter { CheckerboardFilter.isVisible(in: video, frame: $0) }.count
        XCTAssertEqual(painted, 100, "the checkerboard is in every recorded picture")
    }

    func testStampedOnArrivalFollowsTheWallClock() async throws {
        let input = try FrameInput(video: .init(width: 320, height: 240, frameRate: 25),
                                   audio: .init(sampleRate: Self.sampleRate, channels: 2), timestamps: .onArrival)
        Self.feed(input, seconds: 3, realTime: true)
        let probe = try await push(input, stream: "arrival", pacing: .realTime)
        probe.assertWellFormed()
        XCTAssertEqual(probe.videoPackets.count, 75, "every frame")
        let dts = probe.videoPackets.compactMap(\.dtsTime)
        let span = (dts.last ?? 0) - (dts.first ?? 0)
        XCTAssertEqual(span / 74, 0.04, accuracy: 0.004, "about 25 fps on the arrival clock")
    }

    func testSendingAfterFinishOrTheWrongFormatIsRefused() throws {
        let input = try FrameInput(video: nil, audio: .init(sampleRate: 48_000, channels: 2))
        XCTAssertThrowsError(try input.send(VideoFrame(width: 16, height: 16))) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .invalidState)
        }
        XCTAssertThrowsError(try input.send(AudioFrame(sampleRate: 44_100, channels: 2, sampleCount: 1024))) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .unsupportedCodec)
        }
        input.finish()
        XCTAssertThrowsError(try input.send(AudioFrame(sampleRate: 48_000, channels: 2, sampleCount: 1024))) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .invalidState)
        }
        XCTAssertThrowsError(try FrameInput(video: nil, audio: nil))
    }
}
