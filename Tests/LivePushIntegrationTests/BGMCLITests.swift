import Foundation
import XCTest

/// `livepush push --bgm ...` as a user runs it: options, events in JSON, bad values.
final class BGMCLITests: XCTestCase {
    private func livepush(_ arguments: [String]) throws -> ProcessRunner.Result {
        try LivePushCLI.run(arguments)
    }

    func testPushWithMusicPrintsBGMEventsAsJSONAndRecordsTheMix() throws {
        let dir = try TestMedia.makeTemporaryDirectory(prefix: "bgm-cli")
        defer { TestMedia.removeTemporaryDirectory(dir) }
        let source = try BGMTestMedia.source(in: dir, seconds: 3, tone: nil)
        let music = try BGMTestMedia.tone(in: dir, hz: 1000, seconds: 1, name: "music.wav")
        let record = dir.appendingPathComponent("rec")
        let result = try livepush(["push", source, "--fast", "--json", "--receiver-dir", record.path,
                                   "--bgm", music, "--bgm-volume", "100", "--bgm-loop", "--source-volume", "80"])
        XCTAssertEqual(result.exitCode, 0, result.summary)
        let objects = try result.stdoutString.split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], String($0))
        }
        let bgm = objects.filter { $0["group"] as? String == "bgm" }
        XCTAssertEqual(bgm.first?["event"] as? String, "bgmStarted")
        let progress = bgm.filter { $0["event"] as? String == "bgmProgress" }
        XCTAssertGreaterThanOrEqual(progress.count, 2)
        XCTAssertEqual(progress.first?["duration"] as? Double ?? 0, 1, accuracy: 0.05)
        let tones = try ToneAnalysis(recording: record.appendingPathComponent("livepush.flv").path)
        XCTAssertGreaterThan(tones.level(1000, from: 0.2, to: 2.8), 0.05, "the looped music fills the video-only file")
    }

    func testBadMusicOptionsAreUsageErrors() throws {
        let volume = try livepush(["push", TestMedia.path(.h264AAC), "--bgm", "x.mp3", "--bgm-volume", "101"])
        XCTAssertEqual(volume.exitCode, 64)
        XCTAssertTrue(volume.stderrString.contains("--bgm-volume must be between 0 and 100"), volume.stderrString)
        let loop = try livepush(["push", TestMedia.path(.h264AAC), "--bgm-loop"])
        XCTAssertEqual(loop.exitCode, 64)
        XCTAssertTrue(loop.stderrString.contains("need --bgm"), loop.stderrString)
    }

    func testMissingMusicIsReportedAndThePushSucceeds() throws {
        let result = try livepush(["push", TestMedia.path(.h264AAC), "--fast", "--bgm", "/nonexistent/music.mp3"])
        XCTAssertEqual(result.exitCode, 0, result.summary)
        XCTAssertTrue(result.stdoutString.contains("805373185 [0x30010501]"), result.stdoutString)
        XCTAssertTrue(result.stdoutString.contains("received: 100 video frames"), result.stdoutString)
    }
}
