import Foundation
import XCTest

/// Proves the integration-test harness (Support/) against the real tools: ffmpeg publishes a
/// sample to a private nginx-rtmp, nginx records it, ffprobe checks the recording.
final class HarnessTests: XCTestCase {
    private func requireTools() throws {
        try XCTSkipUnless(NginxRTMPServer.isAvailable, "nginx + libnginx-mod-rtmp not installed")
        try XCTSkipUnless(ProcessRunner.which("ffmpeg") != nil, "ffmpeg not installed")
        try XCTSkipUnless(ProcessRunner.which("ffprobe") != nil, "ffprobe not installed")
    }

    // MARK: ProcessRunner

    func testProcessRunnerCapturesOutputAndStatus() throws {
        let result = try ProcessRunner.run("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"], timeout: 10)
        XCTAssertEqual(result.exitCode, 3)
        XCTAssertFalse(result.timedOut)
        XCTAssertFalse(result.succeeded)
        XCTAssertEqual(result.stdoutString, "out\n")
        XCTAssertEqual(result.stderrString, "err\n")
    }

    func testProcessRunnerKillsOnTimeout() async throws {
        let result = try await ProcessRunner.runAsync("sleep", ["30"], timeout: 0.5)
        XCTAssertTrue(result.timedOut)
        XCTAssertFalse(result.succeeded)
        // SIGTERM must work even though this runs on a dispatch thread (which blocks SIGTERM).
        XCTAssertTrue(result.terminatedBySignal)
        XCTAssertEqual(result.exitCode, SIGTERM, "child ignored SIGTERM and needed SIGKILL")
        XCTAssertLessThan(result.elapsed, ProcessRunner.killGrace, result.summary)
    }

    // MARK: FFProbe + samples

    func testSamplesProbeAsDocumented() throws {
        try XCTSkipUnless(ProcessRunner.which("ffprobe") != nil, "ffprobe not installed")
        for sample in TestMedia.Sample.allCases {
            XCTAssertTrue(TestMedia.exists(sample), "missing \(sample.fileName); run Media/generate.sh")
        }

        let main = try FFProbe.run(TestMedia.path(.h264AAC))
        XCTAssertEqual(main.videoStream?.codecName, "h264")
        XCTAssertEqual(main.videoStream?.width, 640)
        XCTAssertEqual(main.videoStream?.height, 360)
        XCTAssertEqual(main.videoStream?.hasBFrames, 0)
        XCTAssertEqual(main.audioStream?.codecName, "aac")
        XCTAssertEqual(main.audioStream?.sampleRate, 44100)
        XCTAssertEqual(main.audioStream?.channels, 2)
        XCTAssertEqual(main.videoPackets.count, 100)
        XCTAssertEqual(main.videoStream?.readPacketCount, 100)
        XCTAssertEqual(main.videoPackets.filter(\.isKeyframe).count, 4, "1 s GOP over 4 s")
        XCTAssertTrue(main.firstVideoIsKeyframe)
        XCTAssertTrue(main.dtsIsMonotonicPerStream)
        XCTAssertEqual(main.duration ?? 0, 4.0, accuracy: 0.05)
        XCTAssertTrue(main.videoPackets.allSatisfy { $0.pts == $0.dts }, "no B-frames: pts == dts")

        let bFrames = try FFProbe.run(TestMedia.path(.bFrames))
        XCTAssertGreaterThan(bFrames.videoStream?.hasBFrames ?? 0, 0)
        XCTAssertTrue(bFrames.videoPackets.contains { $0.pts != $0.dts }, "B-frames reorder pts vs dts")
        XCTAssertTrue(FFProbe.isMonotonic(dts: bFrames.videoPackets, strict: true))

        let ts = try FFProbe.run(TestMedia.path(.transportStream), packets: false)
        XCTAssertEqual(ts.format?.formatName, "mpegts")
        XCTAssertEqual(ts.streams.compactMap(\.codecName), ["h264", "aac"])

        let mkv = try FFProbe.run(TestMedia.path(.transcode), packets: false)
        XCTAssertEqual(mkv.streams.compactMap(\.codecName), ["vp9", "opus"])

        XCTAssertEqual(try FFProbe.run(TestMedia.path(.audioOnly), packets: false).streams.compactMap(\.codecType), ["audio"])
        XCTAssertEqual(try FFProbe.run(TestMedia.path(.videoOnly), packets: false).streams.compactMap(\.codecType), ["video"])
    }

    // MARK: NginxRTMPServer

    func testPublishRecordAndProbe() async throws {
        try requireTools()
        let source = TestMedia.path(.h264AAC)
        let server = try NginxRTMPServer()
        defer { server.stop() }

        let publish = try await ProcessRunner.runAsync(
            "ffmpeg",
            ["-hide_banner", "-loglevel", "error", "-nostdin", "-i", source, "-c", "copy", "-f", "flv",
             server.url(app: "live", stream: "harness")],
            timeout: 30)
        XCTAssertTrue(publish.succeeded, publish.summary + "\n" + server.errorLog)

        let recording = try await server.awaitRecording(stream: "harness", timeout: 15)
        XCTAssertEqual(recording, server.recordingPath(stream: "harness"))

        let expected = try FFProbe.run(source)
        let actual = try FFProbe.run(recording)
        XCTAssertEqual(actual.videoStream?.codecName, "h264")
        XCTAssertEqual(actual.audioStream?.codecName, "aac")
        XCTAssertEqual(actual.videoPackets.count, expected.videoPackets.count)
        XCTAssertEqual(actual.audioPackets.count, expected.audioPackets.count)
        let expectedDuration = try XCTUnwrap(expected.duration)
        let actualDuration = try XCTUnwrap(actual.duration)
        XCTAssertEqual(actualDuration, expectedDuration, accuracy: expectedDuration * 0.01)
        XCTAssertTrue(FFProbe.isMonotonic(dts: actual.videoPackets), "video dts not monotonic")
        XCTAssertTrue(FFProbe.isMonotonic(dts: actual.audioPackets), "audio dts not monotonic")
        XCTAssertTrue(actual.firstVideoIsKeyframe)
        XCTAssertTrue(server.errorLog.contains("publish: name='harness'"), server.errorLog)
    }

    func testAwaitRecordingTimesOutWhenNothingIsPublished() async throws {
        try requireTools()
        let server = try NginxRTMPServer()
        defer { server.stop() }
        let start = Date()
        do {
            _ = try await server.awaitRecording(stream: "never", timeout: 0.3)
            XCTFail("expected a timeout")
        } catch NginxRTMPServer.Failure.recordingTimeout(let stream, _, _) {
            XCTAssertEqual(stream, "never")
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 5)

        // Started and stopped from an async context: nginx must honour SIGTERM (no 5 s SIGKILL fallback).
        let stopStart = Date()
        server.stop()
        XCTAssertFalse(server.isRunning)
        XCTAssertLessThan(Date().timeIntervalSince(stopStart), 2)
    }

    func testStopIsIdempotentAndReleasesPort() throws {
        try requireTools()
        let server = try NginxRTMPServer()
        XCTAssertTrue(server.isRunning)
        XCTAssertTrue(NginxRTMPServer.acceptsConnections(port: server.port))
        XCTAssertTrue(server.url(stream: "x").hasPrefix("rtmp://127.0.0.1:\(server.port)/live/x"))
        server.stop()
        server.stop()
        XCTAssertFalse(server.isRunning)
        XCTAssertFalse(NginxRTMPServer.acceptsConnections(port: server.port))
    }
}
