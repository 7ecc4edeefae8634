import Foundation
import XCTest

/// HLS upload: a real-time push to an origin the test runs (`Support/hls_upload_origin.py`: PUT, DELETE,
/// GET), as FFmpeg's hls muxer uploads with `-method PUT` and `delete_segments`.
final class HLSUploadTests: XCTestCase {
    private var dir: URL!

    override func setUpWithError() throws {
        dir = try TestMedia.makeTemporaryDirectory(prefix: "HLSUploadTests")
    }

    override func tearDown() {
        if let dir { TestMedia.removeTemporaryDirectory(dir) }
        dir = nil
    }

    /// The "Upload": `hls_time=1&hls_list_size=3`, in real time. Segments and playlists
    /// arrive; old segments are deleted, so the origin never holds more than the window and two;
    /// the playlist it serves decodes.
    func testARealTimePushUploadsItsSegmentsAndDeletesThoseThatLeftTheWindow() async throws {
        let source = try PlayoutClip.a.make(in: dir, seconds: 6)
        let (origin, port, stored) = try await startOrigin()
        defer { if origin.isRunning { kill(origin.processIdentifier, SIGKILL) } }

        let cli = try RunningCLI(["push", source, "http://127.0.0.1:\(port)/live/index.m3u8?hls_time=1&hls_list_size=3", "--json"])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let live = stored.appendingPathComponent("live")
        var most = 0
        let deadline = ContinuousClock.now + .seconds(30)
        while cli.isRunning && ContinuousClock.now < deadline {
            let segments = (try? FileManager.default.contentsOfDirectory(atPath: live.path))?.filter { $0.hasSuffix(".ts") } ?? []
            most = max(most, segments.count)
            try await Task.sleep(for: .milliseconds(50))
        }
        let exit = await cli.awaitExit(timeout: .seconds(10))
        XCTAssertEqual(exit, 0, cli.standardError)
        let requests = origin.output
        XCTAssertTrue(requests.contains("PUT /live/index0.ts"), "\(requests)")
        XCTAssertTrue(requests.contains("PUT /live/index.m3u8"), "\(requests)")
        XCTAssertTrue(requests.contains("DELETE /live/index0.ts"), "\(requests)")
        XCTAssertLessThanOrEqual(most, 3 + 2, "the window and two at most")
        let left = try FileManager.default.contentsOfDirectory(atPath: live.path).filter { $0.hasSuffix(".ts") }.sorted()
        XCTAssertEqual(left, ["index2.ts", "index3.ts", "index4.ts", "index5.ts"])
        let playlist = try HLSTestPlaylist(path: live.appendingPathComponent("index.m3u8").path)
        XCTAssertTrue(playlist.ended)
        XCTAssertEqual(playlist.segments.map(\.uri), ["index3.ts", "index4.ts", "index5.ts"])
        let decoded = try ProcessRunner.run("ffmpeg", ["-v", "error", "-nostdin", "-i", "http://127.0.0.1:\(port)/live/index.m3u8",
                                                       "-f", "null", "-"], timeout: 60)
        XCTAssertTrue(decoded.succeeded, decoded.summary)
        XCTAssertEqual(decoded.stderrString, "")
        origin.interrupt()
    }

    /// A channel's output may be an HLS upload with a ladder (the config's output object): the
    /// origin gets the master playlist and both variants, and each decodes; an interrupt ends
    /// the process with every playlist ended.
    func testAChannelUploadsALadder() async throws {
        let source = try PlayoutClip.a.make(in: dir, seconds: 6)
        let (origin, port, stored) = try await startOrigin()
        defer { if origin.isRunning { kill(origin.processIdentifier, SIGKILL) } }

        let config = dir.appendingPathComponent("channels.json")
        try """
        {"channels": [{"id": "h", "input": "\(source)", "loop": "forever",
                       "outputs": [{"url": "http://127.0.0.1:\(port)/ch/index.m3u8?hls_time=1&hls_list_size=3",
                                    "video": [{"size": "320x240", "bitrate": 400}, {"size": "160x120", "bitrate": 150}]}]}]}
        """.write(to: config, atomically: true, encoding: .utf8)
        let cli = try RunningCLI(["channels", config.path])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let live = stored.appendingPathComponent("ch")
        func segments(_ variant: Int) -> Int {
            ((try? HLSTestPlaylist(path: live.appendingPathComponent("index_v\(variant).m3u8").path))?.segments.count) ?? 0
        }
        let deadline = ContinuousClock.now + .seconds(40)
        while cli.isRunning, ContinuousClock.now < deadline, segments(0) < 3 || segments(1) < 3 {
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTAssertGreaterThanOrEqual(segments(0), 3, cli.standardError)
        XCTAssertGreaterThanOrEqual(segments(1), 3, cli.standardError)
        cli.interrupt()
        let exit = await cli.awaitExit(timeout: .seconds(20))
        XCTAssertEqual(exit, 0, cli.standardError)

        let master = try String(contentsOf: live.appendingPathComponent("index.m3u8"), encoding: .utf8)
        XCTAssertTrue(master.contains("RESOLUTION=320x240"), master)
        XCTAssertTrue(master.contains("RESOLUTION=160x120"), master)
        for variant in 0..<2 {
            let playlist = try HLSTestPlaylist(path: live.appendingPathComponent("index_v\(variant).m3u8").path)
            XCTAssertTrue(playlist.ended, "variant \(variant) ended on the interrupt")
            let decoded = try ProcessRunner.run("ffmpeg", ["-v", "error", "-nostdin", "-i", "http://127.0.0.1:\(port)/ch/index_v\(variant).m3u8",
                                                           "-f", "null", "-"], timeout: 60)
            XCTAssertTrue(decoded.succeeded, decoded.summary)
            XCTAssertEqual(decoded.stderrString, "", "variant \(variant) decodes")
        }
        origin.interrupt()
    }

    private struct OriginDidNotStart: Error {
        let standardError: String
    }

    /// The test's origin (PUT, DELETE, GET), storing under `dir/origin`; stopped by the caller.
    private func startOrigin() async throws -> (origin: RunningCLI, port: Int, stored: URL) {
        let stored = dir.appendingPathComponent("origin")
        try FileManager.default.createDirectory(at: stored, withIntermediateDirectories: true)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Support/hls_upload_origin.py").path
        let origin = try RunningCLI(executable: "/usr/bin/python3", ["-u", script, stored.path])
        let line = await origin.awaitLine(timeout: .seconds(15)) { $0.hasPrefix("Serving HTTP on") }
        guard let port = line?.split(separator: " ").last.flatMap({ Int($0) }) else {
            kill(origin.processIdentifier, SIGKILL)
            throw OriginDidNotStart(standardError: origin.standardError)
        }
        return (origin, port, stored)
    }
}
