import Foundation
import LivePush
import XCTest

/// Pushes every sample in Media/ to a real nginx-rtmp over TCP and checks, with ffprobe,
/// what nginx recorded.
final class PushToNginxTests: NginxTestCase {
    /// Pushes `sample` and returns the probe of the source and of the recording.
    private func pushAndProbe(
        _ sample: TestMedia.Sample, stream: String, config: PushConfig = PushHelpers.fastConfig()
    ) async throws -> (source: FFProbe, recorded: FFProbe, run: PushRun) {
        let run = try await PushHelpers.push(file: TestMedia.path(sample), url: server.url(stream: stream), config: config)
        XCTAssertNil(run.error, "push failed: \(String(describing: run.error))")
        let recording = try await server.awaitRecording(stream: stream)
        return (try FFProbe.run(TestMedia.path(sample)), try FFProbe.run(recording), run)
    }

    private func assertSameStreamCopy(_ source: FFProbe, _ recorded: FFProbe, file: StaticString = #filePath, line: UInt = #line) {
        recorded.assertWellFormed(file: file, line: line)
        XCTAssertEqual(recorded.videoStream?.codecName, source.videoStream.map { _ in "h264" }, file: file, line: line)
        XCTAssertEqual(recorded.audioStream?.codecName, source.audioStream.map { _ in "aac" }, file: file, line: line)
        XCTAssertEqual(recorded.videoPackets.count, source.videoPackets.count, "video frame count", file: file, line: line)
        assertSpan(recorded, source.presentationSpan, file: file, line: line)
    }

    /// Duration within 1%, measured as the presentation span (see `FFProbe.presentationSpan`).
    private func assertSpan(_ recorded: FFProbe, _ expected: Double, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(recorded.presentationSpan, expected, accuracy: expected * 0.01, "duration", file: file, line: line)
    }

    func testStreamCopyH264AAC() async throws {
        let (source, recorded, run) = try await pushAndProbe(.h264AAC, stream: "copy")
        assertSameStreamCopy(source, recorded)
        XCTAssertEqual(recorded.videoStream?.width, 640)
        XCTAssertEqual(recorded.audioStream?.sampleRate, 44100)
        XCTAssertEqual(run.stats.videoFramesSent, 100)
        XCTAssertEqual(run.stats.droppedFrames.total, 0)
        XCTAssertEqual(run.eventNames, ["pushStarted", "firstFramePushed", "stopped"])
    }

    func testStreamCopyKeepsBFramesCompositionOffsets() async throws {
        let (source, recorded, _) = try await pushAndProbe(.bFrames, stream: "bframes")
        assertSameStreamCopy(source, recorded)
        XCTAssertTrue(recorded.videoPackets.contains { $0.pts != $0.dts }, "composition offsets were lost")
    }

    func testMPEGTSWithADTSAudio() async throws {
        let (source, recorded, _) = try await pushAndProbe(.transportStream, stream: "ts")
        recorded.assertWellFormed()
        XCTAssertEqual(recorded.videoStream?.codecName, "h264")
        XCTAssertEqual(recorded.audioStream?.codecName, "aac")
        XCTAssertEqual(recorded.audioStream?.sampleRate, 44100)
        XCTAssertEqual(recorded.videoPackets.count, source.videoPackets.count)
        assertSpan(recorded, source.presentationSpan)
    }

    func testTranscodesVP9AndOpus() async throws {
        let (source, recorded, _) = try await pushAndProbe(.transcode, stream: "transcode")
        recorded.assertWellFormed()
        XCTAssertEqual(recorded.videoStream?.codecName, "h264")
        XCTAssertEqual(recorded.audioStream?.codecName, "aac")
        XCTAssertEqual(recorded.videoPackets.count, source.videoPackets.count, "every decoded frame is re-encoded")
        assertSpan(recorded, source.presentationSpan)
    }

    func testForcedTranscodeOfCopyableFile() async throws {
        var config = PushHelpers.fastConfig()
        config.media.forceTranscode = true
        config.media.videoBitrateKbps = 300
        let (source, recorded, _) = try await pushAndProbe(.h264AAC, stream: "forced", config: config)
        recorded.assertWellFormed()
        XCTAssertEqual(recorded.videoPackets.count, source.videoPackets.count)
        assertSpan(recorded, source.presentationSpan)
    }

    func testAudioOnlyAndVideoOnly() async throws {
        let audio = try await pushAndProbe(.audioOnly, stream: "audio")
        audio.recorded.assertWellFormed()
        XCTAssertNil(audio.recorded.videoStream)
        XCTAssertEqual(audio.recorded.audioStream?.codecName, "aac")
        assertSpan(audio.recorded, audio.source.presentationSpan)

        let video = try await pushAndProbe(.videoOnly, stream: "video")
        XCTAssertNil(video.recorded.audioStream)
        assertSameStreamCopy(video.source, video.recorded)
    }

    func testLoopKeepsTimestampsIncreasing() async throws {
        var config = PushHelpers.fastConfig()
        config.looping = .times(3)
        let (source, recorded, run) = try await pushAndProbe(.bFrames, stream: "loop", config: config)
        recorded.assertWellFormed()
        XCTAssertEqual(recorded.videoPackets.count, source.videoPackets.count * 3)
        assertSpan(recorded, source.presentationSpan * 3)
        XCTAssertEqual(run.stats.loopsCompleted, 3)
    }

    func testRealTimePacingFollowsTheWallClock() async throws {
        var config = PushConfig()
        config.statsInterval = .milliseconds(500)
        let (source, recorded, run) = try await pushAndProbe(.h264AAC, stream: "realtime", config: config)
        assertSameStreamCopy(source, recorded)
        // A 4 s file pushed in real time cannot end much before 4 s of wall time.
        XCTAssertGreaterThanOrEqual(run.elapsed, .milliseconds(3700))
        XCTAssertTrue(run.eventNames.contains("stats"))
    }

    func testPauseResumeAndStop() async throws {
        var config = PushConfig()
        config.statsInterval = .zero
        let pusher = LivePusher(config: config)
        let events = pusher.events()
        let start = ContinuousClock.now
        try pusher.start(file: TestMedia.path(.h264AAC), url: server.url(stream: "pause"))
        XCTAssertThrowsError(try pusher.resume()) { XCTAssertEqual(($0 as? LivePushError)?.code, .invalidState) }
        let run = try await PushHelpers.collect(pusher, events, start: start, timeout: .seconds(30)) { pusher in
            while pusher.state != .pushing && pusher.state.description != "failed" { await Task.yield() }
            try? pusher.pause()
            XCTAssertEqual(pusher.state, .paused)
            XCTAssertThrowsError(try pusher.pause())
            try? await Task.sleep(for: .milliseconds(300))  // a pause that lasts: the scenario, not a synchronisation
            try? pusher.resume()
            try? await Task.sleep(for: .milliseconds(300))
            try? pusher.stop()
        }
        XCTAssertNil(run.error)
        XCTAssertEqual(pusher.state, .stopped)
        XCTAssertEqual(Array(run.eventNames.prefix(1)), ["pushStarted"])
        XCTAssertTrue(run.eventNames.contains("paused"))
        XCTAssertTrue(run.eventNames.contains("resumed"))
        XCTAssertEqual(run.eventNames.last, "stopped")
        let recording = try await server.awaitRecording(stream: "pause")
        let recorded = try FFProbe.run(recording)
        recorded.assertWellFormed()
        XCTAssertLessThan(recorded.videoPackets.count, 100, "stop ended the push early")
    }
}
