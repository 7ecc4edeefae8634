import Foundation
import XCTest

/// The video-processing flags of `livepush push`: filters, watermark, encoder settings.
final class CLIVideoTests: XCTestCase {
    private func livepush(_ arguments: [String]) throws -> ProcessRunner.Result {
        try LivePushCLI.run(arguments)
    }

    func testFiltersAndEncoderSettingsReachTheRecording() throws {
        let record = try TestMedia.makeTemporaryDirectory(prefix: "cli-video")
        defer { TestMedia.removeTemporaryDirectory(record) }
        let watermark = TestMedia.mediaDirectory.appendingPathComponent("watermark.png").path
        let result = try livepush([
            "push", TestMedia.path(.h264AAC), "--fast", "--json", "--receiver-dir", record.path,
            "--filter", "beauty=0.7", "--watermark", watermark, "--watermark-position", "bottom-left",
            "--video-size", "320x180", "--fps", "15", "--gop", "1", "--preset", "ultrafast",
            "--target-bitrate", "300", "--min-bitrate", "100",
        ])
        XCTAssertEqual(result.exitCode, 0, result.summary)
        let objects = result.stdoutString.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let created = objects.filter { $0["event"] as? String == "filterCreated" }.compactMap { $0["filter"] as? String }
        XCTAssertEqual(created, ["beauty", "watermark"])
        XCTAssertEqual(objects.first { $0["event"] as? String == "filterCreated" }?["group"] as? String, "filter")
        let stopped = objects.first { $0["event"] as? String == "stopped" }?["stats"] as? [String: Any]
        let pipeline = try XCTUnwrap(stopped?["pipeline"] as? [String: Any])
        XCTAssertEqual(pipeline["encoderBitrate"] as? Int, 300_000)
        XCTAssertGreaterThanOrEqual(pipeline["filteredFrames"] as? Int ?? 0, 58)

        let probe = try FFProbe.run(record.appendingPathComponent("livepush.flv").path)
        probe.assertWellFormed()
        XCTAssertEqual(probe.videoStream?.width, 320)
        XCTAssertEqual(probe.videoStream?.height, 180)
        XCTAssertEqual(Double(probe.videoPackets.count), 60, accuracy: 2)
        XCTAssertEqual(probe.videoPackets.filter(\.isKeyframe).count, 4, "--gop 1 over 4 s")
    }

    func testBadVideoOptionsAreUsageErrorsOrCodedFailures() throws {
        let unknownFilter = try livepush(["push", TestMedia.path(.h264AAC), "--filter", "sepia"])
        XCTAssertEqual(unknownFilter.exitCode, 64, unknownFilter.summary)
        let badSize = try livepush(["push", TestMedia.path(.h264AAC), "--video-size", "big"])
        XCTAssertEqual(badSize.exitCode, 64, badSize.summary)
        let badBitrates = try livepush(["push", TestMedia.path(.h264AAC), "--target-bitrate", "300", "--min-bitrate", "500"])
        XCTAssertEqual(badBitrates.exitCode, 64, badBitrates.summary)

        let missing = try livepush(["push", TestMedia.path(.h264AAC), "--watermark", "/nonexistent/logo.png"])
        XCTAssertEqual(missing.exitCode, 1, missing.summary)
        XCTAssertTrue(missing.stderrString.contains("[0x30030202] imageOpenFailed"), missing.stderrString)
        let notImage = try livepush(["push", TestMedia.path(.h264AAC), "--pause-image", TestMedia.mediaDirectory.appendingPathComponent("README.md").path])
        XCTAssertEqual(notImage.exitCode, 1, notImage.summary)
        XCTAssertTrue(notImage.stderrString.contains("imageOpenFailed"), notImage.stderrString)
    }
}
