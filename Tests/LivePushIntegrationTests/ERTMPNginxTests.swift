import Foundation
import XCTest

/// Enhanced RTMP against a server that confirms nothing and reads none of it: nginx-rtmp 1.2. A
/// codec it did not confirm is sent with a coded warning; a ladder goes as track 0 only, with one.
final class ERTMPNginxTests: NginxTestCase {
    /// `--video-codec hevc` to nginx: sent as asked, with one `codecNotConfirmed` warning naming `hvc1`.
    func testHEVCToNginxWarnsThatHvc1WasNotConfirmed() async throws {
        let events = try await push(try clip(width: 320, height: 240), stream: "hevc", ["--video-codec", "hevc"])
        let warnings = events.filter { $0["event"] as? String == "warning" }
        XCTAssertEqual(warnings.count, 1, "once per connection: \(warnings)")
        let error = try XCTUnwrap(warnings.first?["error"] as? [String: Any])
        XCTAssertEqual(error["name"] as? String, "codecNotConfirmed")
        XCTAssertEqual(error["code"] as? Int, 0x3002_0B01)
        XCTAssertTrue((error["message"] as? String ?? "").contains("did not confirm hvc1"), "\(error)")
        XCTAssertFalse(events.contains { $0["event"] as? String == "serverCapabilities" }, "nginx says nothing of E-RTMP")
    }

    /// A ladder to nginx: track 0 (1280x720) only, every frame, and one `multitrackNotConfirmed` warning.
    func testALadderToNginxGoesAsTrackZeroWithAWarning() async throws {
        let events = try await push(try clip(width: 1280, height: 720), stream: "ladder",
                                    ["--output-video", "0=1280x720@2500", "--output-video", "0=640x360@800"])
        let warnings = events.filter { $0["event"] as? String == "warning" }.compactMap { $0["error"] as? [String: Any] }
        XCTAssertEqual(warnings.map { $0["name"] as? String }, ["multitrackNotConfirmed"])
        XCTAssertTrue((warnings.first?["message"] as? String ?? "").contains("only 1280x720 (track 0) is sent"), "\(warnings)")
        let recorded = try FFProbe.run(try await server.awaitRecording(stream: "ladder"))
        recorded.assertWellFormed()
        let videos = recorded.streams.filter(\.isVideo)
        XCTAssertEqual(videos.count, 1)
        XCTAssertEqual(videos.first?.codecName, "h264")
        XCTAssertEqual(videos.first?.width, 1280)
        XCTAssertEqual(recorded.videoPackets.count, 125, "every frame of track 0")
    }

    /// `--video-codec hevc,h264` to nginx, which confirms no `hvc1`: the H.264 source is sent as
    /// it is, every frame, decodable, and no warning (H.264 needs no confirmation).
    func testAPreferenceListSendsH264ToNginx() async throws {
        let events = try await push(try clip(width: 320, height: 240), stream: "preferred", ["--video-codec", "hevc,h264"])
        XCTAssertEqual(events.filter { $0["event"] as? String == "warning" }.count, 0)
        let recording = try await server.awaitRecording(stream: "preferred")
        let recorded = try FFProbe.run(recording)
        recorded.assertWellFormed()
        XCTAssertEqual(recorded.videoStream?.codecName, "h264")
        XCTAssertEqual(recorded.videoPackets.count, 125, "every frame")
        let decoded = try ProcessRunner.run("ffmpeg", ["-v", "error", "-nostdin", "-i", recording, "-map", "0:v", "-f", "framemd5", "-"], timeout: 60)
        XCTAssertTrue(decoded.succeeded, decoded.summary)
        XCTAssertEqual(decoded.stdoutString.split(separator: "\n").filter { !$0.hasPrefix("#") }.count, 125, "every frame decodes")
    }

    // MARK: - Helpers

    /// A 5 s, 25 fps H.264 clip with a tone, at `width`x`height`.
    private func clip(width: Int, height: Int) throws -> String {
        let path = dir.appendingPathComponent("clip-\(width)x\(height).mp4").path
        let made = try ProcessRunner.run("ffmpeg", ["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc=size=\(width)x\(height):rate=25:d=5",
                                                   "-f", "lavfi", "-i", "sine=frequency=300:duration=5", "-g", "25", "-c:v", "libx264",
                                                   "-preset", "ultrafast", "-c:a", "aac", "-shortest", path], timeout: 120)
        try XCTSkipUnless(made.succeeded, "ffmpeg cannot make the clip: \(made.summary)")
        return path
    }

    /// Pushes `source` (`--fast --json`) to nginx's `stream` and returns the events printed.
    private func push(_ source: String, stream: String, _ arguments: [String]) async throws -> [[String: Any]] {
        let cli = try RunningCLI(["push", source, server.url(stream: stream), "--fast", "--json"] + arguments)
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let exit = await cli.awaitExit(timeout: .seconds(90))
        XCTAssertEqual(exit, 0, cli.standardError)
        return cli.output.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }
}
