import Foundation
import LivePushWire
import XCTest

/// How a local recording ends: an orchestrator's stop (SIGTERM) and a full disk, against nginx.
final class RecordingEndTests: NginxTestCase {
    /// SIGTERM about 6 s into a real-time push with `--record`, as systemd or Kubernetes stop a
    /// service: a clean exit within 5 s, a local FLV with its duration in `onMetaData` and whole
    /// to its last tag, and nginx's recording of the same length.
    func testSIGTERMEndsThePushAndFinishesTheRecording() async throws {
        let directory = try temporaryDirectory()
        let local = directory + "/local.flv"
        let cli = try RunningCLI(["push", TestMedia.path(.h264AAC), server.url(stream: "term"), "--loop", "forever",
                                  "--record", local, "--json"])
        let first = await cli.awaitLine { $0.contains("firstFramePushed") }
        XCTAssertNotNil(first, "the push never started: \(cli.output)")
        // The scenario's length, not a measurement: the stop comes about 6 s in.
        try await Task.sleep(for: .seconds(6))
        XCTAssertEqual(kill(cli.processIdentifier, SIGTERM), 0)
        let stopped = ContinuousClock.now
        let status = await cli.awaitExit(timeout: .seconds(10))
        XCTAssertEqual(status, 0, "a requested stop exits 0: \(cli.output.suffix(5))")
        XCTAssertLessThan(ContinuousClock.now - stopped, .seconds(5))

        let tags = try FLVFileReader.tags(in: Array(try Data(contentsOf: URL(fileURLWithPath: local))))
        let metadata = try XCTUnwrap(tags.first { $0.type == .script }, "no script tag")
        let values = try AMF0.decode(metadata.body)
        XCTAssertEqual(values.first, .string("onMetaData"), "a file's metadata tag is onMetaData itself")
        guard case .ecmaArray(let properties)? = values.dropFirst().first,
              case .number(let duration)? = properties.first(where: { $0.key == "duration" })?.value else {
            return XCTFail("no duration in \(values)")
        }
        let last = Double(tags.map(\.timestampMs).max() ?? 0) / 1000
        XCTAssertEqual(duration, last, accuracy: 0.001, "the header's duration is the last tag's time")
        // What the push says it sent, not the 6 s of the test's clock: a busy machine sends less.
        let sent = try XCTUnwrap(cli.stoppedStats?["mediaTimeSent"] as? Double, "no stopped event: \(cli.output.suffix(3))")
        XCTAssertEqual(duration, sent, accuracy: 0.1, "the recording holds all the push sent")
        XCTAssertGreaterThan(duration, 1, "a real stretch was recorded")

        let decode = try ProcessRunner.run("ffmpeg", ["-v", "error", "-i", local, "-f", "null", "-"], timeout: 60)
        XCTAssertTrue(decode.succeeded, decode.stderrString)
        XCTAssertEqual(decode.stderrString, "", "the local recording decodes without an error")
        let probe = try FFProbe.run(local)
        XCTAssertEqual(probe.format?.duration ?? 0, duration, accuracy: 0.1)

        let remote = try FFProbe.run(try await server.awaitRecording(stream: "term"))
        XCTAssertEqual(remote.format?.duration ?? 0, duration, accuracy: 0.5, "nginx recorded the same stretch")
    }

    /// A recorder whose disk fills says so (`recordFailed`) and stops; the push goes on, and
    /// what was recorded up to then stays readable.
    func testAFullDiskEndsTheRecordingNotThePush() async throws {
        let directory = try temporaryDirectory()
        let mount = try ProcessRunner.run("mount", ["-t", "tmpfs", "-o", "size=128k", "tmpfs", directory], timeout: 10)
        try XCTSkipUnless(mount.succeeded, "cannot mount a tmpfs here (needs root): \(mount.stderrString)")
        defer { _ = try? ProcessRunner.run("umount", [directory], timeout: 10) }
        let local = directory + "/full.flv"

        let run = try LivePushCLI.run(["push", TestMedia.path(.h264AAC), server.url(stream: "full"), "--fast",
                                       "--record", local, "--json"], timeout: 60)
        XCTAssertEqual(run.exitCode, 0, run.stderrString)
        let failure = run.stdoutString.split(separator: "\n").first { $0.contains("\"code\":805503745") }
        XCTAssertNotNil(failure, "no recordFailed (805503745): \(run.stdoutString)")
        XCTAssertTrue(failure?.contains("No space left on device") ?? false, String(failure ?? ""))

        let remote = try FFProbe.run(try await server.awaitRecording(stream: "full"))
        XCTAssertEqual(remote.videoStream?.readPacketCount, 100, "the push sent every frame")
        let recorded = try FLVFileReader.tags(in: Array(try Data(contentsOf: URL(fileURLWithPath: local))),
                                             allowTruncatedTail: true)
        XCTAssertGreaterThan(recorded.filter { $0.type == .video }.count, 10, "what fit on the disk is readable")
        let probe = try FFProbe.run(local)
        XCTAssertGreaterThan(probe.videoStream?.readPacketCount ?? 0, 10)
    }

    private func temporaryDirectory() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("recording-end-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url.path
    }
}
