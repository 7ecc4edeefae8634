import Foundation
import XCTest

/// The runnable examples (`Examples/`), each run as the built binary the way a reader runs it,
/// against nginx or (for the loopback example) the loopback it starts itself: its exit status,
/// what it printed, and what arrived. Every run has a timeout (the process is killed past it).
final class ExamplesTests: NginxTestCase {
    /// An example's executable, built next to the test bundle as `livepush` is (see ``LivePushCLI``).
    private func example(_ name: String) throws -> String {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let found = [directory, directory.deletingLastPathComponent()]
            .map { $0.appendingPathComponent(name).path }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
        return try XCTUnwrap(found, "\(name) not found next to the test bundle")
    }

    private func run(_ name: String, _ arguments: [String], timeout: TimeInterval) async throws -> ProcessRunner.Result {
        let result = try await ProcessRunner.runAsync(try example(name), arguments, timeout: timeout)
        XCTAssertFalse(result.timedOut, "\(name) must end by itself: \(result.summary)")
        return result
    }

    func testPusherPushesTheWholeFileAndExitsZero() async throws {
        let source = TestMedia.path(.h264AAC)
        let result = try await run("example-pusher", [source, server.url(stream: "pusher")], timeout: 60)
        let output = result.stdoutString
        XCTAssertTrue(result.succeeded, "\(result.summary)\n\(output)")
        for callback in ["connected and publishing", "first frame sent", "stopped after", "done"] {
            XCTAssertTrue(output.contains(callback), "\(callback): \(output)")
        }
        let sent = try FFProbe.run(source)
        let arrived = try FFProbe.run(try await server.awaitRecording(stream: "pusher"))
        arrived.assertWellFormed()
        XCTAssertEqual(arrived.videoPackets.count, sent.videoPackets.count, "every picture of the file")
        XCTAssertEqual(arrived.audioPackets.count, sent.audioPackets.count, accuracy: 2)

        // And it says so when the push fails: nothing listens on port 1.
        let refused = try await run("example-pusher", [source, "rtmp://127.0.0.1:1/live/nobody"], timeout: 30)
        XCTAssertEqual(refused.exitCode, 1, "\(refused.summary)\n\(refused.stdoutString)")
        XCTAssertTrue(refused.stdoutString.contains("connect failed"), refused.stdoutString)
    }

    func testFramesPushesThreeSecondsOfGeneratedPicturesAndTone() async throws {
        let result = try await run("example-frames", [server.url(stream: "frames")], timeout: 60)
        XCTAssertTrue(result.succeeded, "\(result.summary)\n\(result.stdoutString)")
        XCTAssertTrue(result.stdoutString.contains("sent 75 video frames"), result.stdoutString)
        let recording = try await server.awaitRecording(stream: "frames")
        let probe = try FFProbe.run(recording)
        probe.assertWellFormed()
        XCTAssertEqual(probe.videoStream?.codecName, "h264")
        XCTAssertEqual(probe.videoStream?.width, 320)
        XCTAssertEqual(probe.audioStream?.codecName, "aac")
        XCTAssertEqual(probe.videoPackets.count, 75, "3 s at 25 fps")
        XCTAssertEqual(Double(probe.audioPackets.count * 1024) / 48_000, 3.0, accuracy: 0.1)
        let tones = try ToneAnalysis(recording: recording)
        XCTAssertGreaterThan(tones.level(440, from: 0.5, to: tones.seconds - 0.5), 0.1, "the 440 Hz tone arrived")
    }

    func testLoopbackTestGetsTheExpectedCodes() async throws {
        let result = try await run("example-loopback-test", [TestMedia.path(.h264AAC)], timeout: 90)
        let output = result.stdoutString
        XCTAssertTrue(result.succeeded, "\(result.summary)\n\(output)")
        XCTAssertTrue(output.contains("ok: publishRejected"), output)
        XCTAssertTrue(output.contains("ok: connectRejected"), output)
        XCTAssertFalse(output.contains("FAIL"), output)
    }

    func testPlayoutControlChangesTheChannelOnAir() async throws {
        let content = try PlayoutClip.a.make(in: dir, seconds: 6)
        let insert = try PlayoutClip.x.make(in: dir, seconds: 3)
        let result = try await run("example-playout-control", [content, insert, server.url(stream: "channel")], timeout: 90)
        XCTAssertTrue(result.succeeded, "\(result.summary)\n\(result.stdoutString)")
        XCTAssertTrue(result.stdoutString.contains("played main, now, main, extra"), result.stdoutString)

        // Where the example skipped, in media sent (it sleeps half a second of wall time first).
        let skipLine = result.stdoutString.split(separator: "\n").first { $0.hasPrefix("skipping extra at ") }
        let skippedAt = try XCTUnwrap(skipLine.flatMap { Double($0.split(separator: " ")[3]) }, result.stdoutString)

        // Cut back into entries by colour: A 0-1 s, X 0-1 s (now), A 1-4 s, X until the skip.
        let recording = try PlayoutRecording(path: try await server.awaitRecording(stream: "channel"), frameRate: 25)
        XCTAssertEqual(recording.segments.map(\.name), ["A", "X", "A", "X"], "\(recording.segments)")
        guard recording.segments.count == 4 else { return }
        let frames = recording.segments.map(\.frames)
        XCTAssertEqual(frames[0] + frames[2], 100, accuracy: 1, "the content resumed where it was cut")
        XCTAssertEqual(frames[1], 25, accuracy: 1)
        // The appended clip was cut where the skip came: the media sent then, and the few frames
        // the producer had read ahead of the sender.
        let extraStart = Double(frames[0] + frames[1] + frames[2]) / 25
        let expected = Int(((skippedAt - extraStart) * 25).rounded())
        print("extra from \(extraStart) s, skipped at \(skippedAt) s of media sent: \(frames[3]) frames (\(expected) expected)")
        XCTAssertEqual(frames[3], expected, accuracy: 3, "the appended clip, skipped at \(skippedAt) s")
    }
}
