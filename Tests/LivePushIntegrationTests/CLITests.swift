import Foundation
import XCTest

/// Runs the built `livepush` executable the way a user does: exit status, messages, JSON lines.
final class CLITests: XCTestCase {
    /// `swift test` builds the executable next to the test bundle.
    private func livepush(_ arguments: [String], timeout: TimeInterval = 60) throws -> ProcessRunner.Result {
        try LivePushCLI.run(arguments, timeout: timeout)
    }

    func testPushToTheEmbeddedReceiverPrintsWhatItReceived() throws {
        let record = try TestMedia.makeTemporaryDirectory(prefix: "cli-record")
        defer { TestMedia.removeTemporaryDirectory(record) }
        let result = try livepush(["push", TestMedia.path(.h264AAC), "--fast", "--receiver-dir", record.path])
        XCTAssertEqual(result.exitCode, 0, result.summary)
        XCTAssertTrue(result.stdoutString.contains("[info] pushStarted"), result.stdoutString)
        XCTAssertTrue(result.stdoutString.contains("received: 100 video frames (4 keyframes), 174 audio frames"), result.stdoutString)
        let recording = record.appendingPathComponent("livepush.flv").path
        let probe = try FFProbe.run(recording)
        probe.assertWellFormed()
        XCTAssertEqual(probe.videoPackets.count, 100)
        XCTAssertEqual(probe.audioPackets.count, 174)
    }

    func testJSONPrintsOneObjectPerEventPerLine() throws {
        // No stats lines (--stats-interval 0): how many a push prints depends on how long it ran.
        let result = try livepush(["push", TestMedia.path(.bFrames), "--fast", "--json", "--stats-interval", "0"])
        XCTAssertEqual(result.exitCode, 0, result.summary)
        let lines = result.stdoutString.split(separator: "\n")
        let objects = try lines.map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], String($0)) }
        let names = objects.compactMap { $0["event"] as? String }
        XCTAssertEqual(names.filter { $0 != "stateChanged" }, ["pushStarted", "firstFramePushed", "stopped", "received"])
        let stopped = try XCTUnwrap(objects.first { $0["event"] as? String == "stopped" }?["stats"] as? [String: Any])
        XCTAssertEqual(stopped["videoFramesSent"] as? Int, 100)
        XCTAssertEqual(objects.last?["monotonic"] as? Bool, true)
    }

    func testBadInputExitsNonZeroWithTheCodeAndSentence() throws {
        let missing = try livepush(["push", "/nonexistent/clip.mp4", "rtmp://127.0.0.1/live/s"])
        XCTAssertEqual(missing.exitCode, 1)
        XCTAssertTrue(missing.stderrString.contains("805503233 [0x30030101] fileNotFound: The media file does not exist"),
                      missing.stderrString)

        let badURL = try livepush(["push", TestMedia.path(.h264AAC), "rtmp://bad host/app"])
        XCTAssertEqual(badURL.exitCode, 1)
        XCTAssertTrue(badURL.stderrString.contains("[0x30020905] invalidURL"), badURL.stderrString)

        let port = try NginxRTMPServer.freeLoopbackPort()
        let refused = try livepush(["push", TestMedia.path(.h264AAC), "rtmp://127.0.0.1:\(port)/live/s", "--json"])
        XCTAssertEqual(refused.exitCode, 1)
        XCTAssertTrue(refused.stdoutString.contains("\"event\":\"connectFailed\""), refused.stdoutString)
        XCTAssertTrue(refused.stderrString.contains("connectionRefused"), refused.stderrString)

        let usage = try livepush(["push"])
        XCTAssertEqual(usage.exitCode, 64, usage.summary)
    }

    func testSecretsAreNotPrinted() throws {
        try XCTSkipUnless(NginxRTMPServer.isAvailable, "nginx + libnginx-mod-rtmp not installed")
        let server = try NginxRTMPServer()
        defer { server.stop() }
        let secret = "1700000000-0-0-0123456789abcdef0123456789abcdef"
        let url = server.url(stream: "secret") + "?auth_key=\(secret)"
        for flags in [["--json"], []] {
            let result = try livepush(["push", TestMedia.path(.audioOnly), url, "--fast"] + flags)
            XCTAssertEqual(result.exitCode, 0, result.summary)
            let output = result.stdoutString + result.stderrString
            XCTAssertTrue(output.contains("auth_key=1700****"), output)
            XCTAssertFalse(output.contains("0123456789abcdef"), output)
        }
    }
}
