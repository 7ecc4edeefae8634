import Foundation
import XCTest

/// HLS outputs against peers nobody here wrote: the playlists and segments a push writes to a
/// `file://` directory, served by Python's http.server and read by ffmpeg and ffprobe, and the
/// cue tags' SCTE-35 decoded by threefive.
final class HLSOutputTests: XCTestCase {
    private var dir: URL!

    override func setUpWithError() throws {
        dir = try TestMedia.makeTemporaryDirectory(prefix: "HLSOutputTests")
    }

    override func tearDown() {
        if let dir { TestMedia.removeTemporaryDirectory(dir) }
        dir = nil
    }

    private func makeHLSDirectory() throws -> URL {
        let hls = dir.appendingPathComponent("hls")
        try FileManager.default.createDirectory(at: hls, withIntermediateDirectories: true)
        return hls
    }

    /// ffmpeg decodes the playlist over HTTP without a word on its error output.
    private func assertDecodes(_ url: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let decoded = try ProcessRunner.run("ffmpeg", ["-v", "error", "-nostdin", "-i", url, "-f", "null", "-"], timeout: 60)
        XCTAssertTrue(decoded.succeeded, decoded.summary, file: file, line: line)
        XCTAssertEqual(decoded.stderrString, "", "ffmpeg's errors", file: file, line: line)
    }

    /// The issue's "Playout to HLS": the playout test schedule (five ad breaks) pushed `--fast`
    /// to a directory, every segment kept. Each break starts a segment within 40 ms of its time in
    /// the schedule and carries its three tags; the playlist decodes and lasts what the schedule does.
    func testThePlayoutScheduleToHLSStartsASegmentAtEveryBreakWithItsTags() async throws {
        try PlayoutClip.a.make(in: dir, seconds: 10)
        try PlayoutClip.b.make(in: dir, seconds: 5)
        try PlayoutClip.x.make(in: dir, seconds: 3)
        try PlayoutClip.y.make(in: dir, seconds: 3)
        let schedule = dir.appendingPathComponent("schedule.json").path
        try PlayoutTests.example.write(toFile: schedule, atomically: true, encoding: .utf8)
        let hls = try makeHLSDirectory()
        let result = try LivePushCLI.run(["playout", schedule, "file://\(hls.path)/index.m3u8?hls_time=2&hls_list_size=0",
                                          "--size", "320x240", "--fast", "--json"], timeout: 120)
        XCTAssertEqual(result.exitCode, 0, result.summary)

        let playlist = try HLSTestPlaylist(path: hls.appendingPathComponent("index.m3u8").path)
        print("HLSOutputTests playout: \(playlist.segments.map { ($0.uri, $0.start, $0.duration) })")
        XCTAssertTrue(playlist.ended, "#EXT-X-ENDLIST at the end")
        XCTAssertEqual(playlist.mediaSequence, 0)
        XCTAssertEqual(playlist.targetDuration, Int((playlist.segments.map(\.duration).max() ?? 0).rounded(.toNearestOrAwayFromZero)), "RFC 8216: the longest EXTINF rounded to the nearest second")
        XCTAssertEqual(playlist.totalDuration, 28, accuracy: 0.5, "the schedule's length")
        // The output's figures in the last stats: every segment, no splice moved (the inputs start a keyframe at each).
        let stopped = result.stdoutString.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.last { $0["event"] as? String == "stopped" }
        let output = ((stopped?["stats"] as? [String: Any])?["outputs"] as? [[String: Any]])?.first
        XCTAssertEqual(output?["kind"] as? String, "hls")
        let figures = output?["hls"] as? [String: Any]
        XCTAssertEqual(figures?["segments"] as? Int, playlist.segments.count, "\(String(describing: output))")
        XCTAssertEqual(figures?["splicesMoved"] as? Int, 0)
        XCTAssertEqual(figures?["filesWritten"] as? Int, 2 * playlist.segments.count, "each segment, then its playlist")
        // Every file the playlist lists is there, and nothing else is (no temporary file left).
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: hls.path))
        XCTAssertEqual(files, Set(playlist.segments.map(\.uri) + ["index.m3u8"]))
        // Dates follow the media: each segment's is the first one's plus where it starts.
        let first = try XCTUnwrap(playlist.segments.first?.programDateTime)
        for segment in playlist.segments {
            let date = try XCTUnwrap(segment.programDateTime, segment.uri)
            XCTAssertEqual(date.timeIntervalSince(first), segment.start, accuracy: 0.002, segment.uri)
        }

        // The breaks (schedule: preroll x1 0–2, y1+x2 6–9, y2 13–14, y2 24–25, postroll 27–28).
        let breaks: [(start: Double, duration: Double)] = [(0, 2), (6, 3), (13, 1), (24, 1), (27, 1)]
        let outs = playlist.segments.filter { $0.tag("#EXT-X-CUE-OUT:") != nil }
        XCTAssertEqual(outs.count, breaks.count, "\(outs.map(\.start))")
        XCTAssertEqual(playlist.segments.filter { $0.tags.contains("#EXT-X-CUE-IN") }.count, breaks.count - 1, "a return after each but the last")
        var sections: [String] = []
        for (index, expected) in breaks.enumerated() {
            guard let segment = outs.first(where: { abs($0.start - expected.start) <= 0.04 }) else {
                XCTFail("break \(index) at \(expected.start) s starts no segment: CUE-OUTs at \(outs.map(\.start))")
                continue
            }
            XCTAssertEqual(segment.tag("#EXT-X-CUE-OUT:DURATION=").flatMap(Double.init) ?? -1, expected.duration, accuracy: 0.05)
            let dateRange = try XCTUnwrap(segment.tag("#EXT-X-DATERANGE:"), "break \(index)'s DATERANGE")
            XCTAssertTrue(dateRange.contains("PLANNED-DURATION=\(String(format: "%.3f", expected.duration))"), dateRange)
            XCTAssertTrue(dateRange.contains(",SCTE35-OUT=0xFC"), dateRange)
            sections.append(try XCTUnwrap(segment.tag("#EXT-OATCLS-SCTE35:"), "break \(index)'s OATCLS"))
            // The segment starts with the break's picture: its first PTS is the splice, on the TS timeline.
            let probe = try FFProbe.run(hls.appendingPathComponent(segment.uri).path)
            let firstPicture = try XCTUnwrap(probe.videoPackets.compactMap(\.ptsTime).min())
            XCTAssertEqual(firstPicture - 1.4, expected.start, accuracy: 0.04, "break \(index)'s first picture")
            XCTAssertTrue(probe.videoPackets.first?.isKeyframe ?? false, "break \(index) starts on a keyframe")
        }
        // threefive reads each OATCLS: an out-of-network splice_insert at the break, for its length,
        // with the TS timeline's pts_adjustment.
        let decoded = try PythonTools.threefive(sections)
        XCTAssertEqual(decoded.count, breaks.count)
        for (cue, expected) in zip(decoded, breaks) {
            let command = cue["command"] as? [String: Any]
            XCTAssertEqual(command?["name"] as? String, "Splice Insert")
            XCTAssertEqual(command?["out_of_network_indicator"] as? Bool, true)
            XCTAssertEqual(command?["break_duration"] as? Double ?? -1, expected.duration, accuracy: 0.05)
            XCTAssertEqual(command?["pts_time"] as? Double ?? -1, expected.start, accuracy: 0.04)
            let info = cue["info_section"] as? [String: Any]
            XCTAssertEqual(info?["pts_adjustment"] as? Double ?? -1, 1.4, accuracy: 0.001)
        }

        // Served over HTTP, ffmpeg decodes it whole without an error, and it lasts the schedule.
        let server = try await HLSDirectoryServer(directory: hls.path)
        try assertDecodes(server.url("index.m3u8"))
        let probe = try FFProbe.run(server.url("index.m3u8"), countPackets: false, timeout: 60)
        XCTAssertEqual(probe.presentationSpan, 28, accuracy: 0.5)
        await server.stop()
    }

    /// Real time, a short sliding window: a channel of A (6 s) with X as a midroll at 2 s for 1 s,
    /// `hls_time=1&hls_list_size=2` (the push's encode has a 2 s GOP: segments 0–2, 2–3 the break,
    /// 3–5, 5–7). Every playlist read while it runs is whole; the directory never holds more than
    /// the window and the segment that just left it (and one being written); the break's tags
    /// are in the playlists while its segments are; the last playlist decodes.
    func testARealTimePlayoutKeepsASlidingWindowWithItsBreak() async throws {
        try PlayoutClip.a.make(in: dir, seconds: 6)
        try PlayoutClip.x.make(in: dir, seconds: 1)
        let schedule = dir.appendingPathComponent("schedule.json").path
        try """
        { "content": [ {"id": "a", "source": "A.mp4", "in": 0, "out": 6} ],
          "ads": [ {"id": "x", "source": "X.mp4", "type": "midroll", "at": 2, "in": 0, "out": 1} ] }
        """.write(toFile: schedule, atomically: true, encoding: .utf8)
        let hls = try makeHLSDirectory()
        let cli = try RunningCLI(["playout", schedule, "file://\(hls.path)/live.m3u8?hls_time=1&hls_list_size=2", "--size", "320x240", "--json"])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        var most = 0
        var versions: Set<String> = []
        let deadline = ContinuousClock.now + .seconds(30)
        while cli.isRunning && ContinuousClock.now < deadline {
            let segments = (try? FileManager.default.contentsOfDirectory(atPath: hls.path))?.filter { $0.hasSuffix(".ts") } ?? []
            most = max(most, segments.count)
            if let text = try? String(contentsOfFile: hls.appendingPathComponent("live.m3u8").path, encoding: .utf8) {
                // Never half a playlist: each read is a whole one.
                XCTAssertNoThrow(try HLSTestPlaylist(text: text), text)
                versions.insert(text)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let exit = await cli.awaitExit(timeout: .seconds(10))
        XCTAssertEqual(exit, 0, cli.standardError)
        let read = versions.compactMap { try? HLSTestPlaylist(text: $0) }
        XCTAssertTrue(read.contains { ($0.mediaSequence ?? 0) > 0 }, "the window slid while the push ran")
        XCTAssertLessThanOrEqual(most, 2 + 2, "at most the window, the segment that just left it and one being written")
        let segments = read.flatMap(\.segments)
        XCTAssertTrue(segments.contains { $0.uri == "live1.ts" && $0.tag("#EXT-X-CUE-OUT:DURATION=") == "1.000" && abs($0.duration - 1) < 0.04 },
                      "the break's segment, with its CUE-OUT: \(versions)")
        XCTAssertTrue(segments.contains { $0.uri == "live2.ts" && $0.tags.contains("#EXT-X-CUE-IN") }, "the return: \(versions)")
        let playlist = try HLSTestPlaylist(path: hls.appendingPathComponent("live.m3u8").path)
        XCTAssertTrue(playlist.ended)
        XCTAssertEqual(playlist.mediaSequence, 2)
        XCTAssertEqual(playlist.segments.map(\.uri), ["live2.ts", "live3.ts"])
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: hls.path)), ["live.m3u8", "live1.ts", "live2.ts", "live3.ts"])
        let server = try await HLSDirectoryServer(directory: hls.path)
        try assertDecodes(server.url("live.m3u8"))
        await server.stop()
    }

    /// A source's own SCTE-35, passed on (no alternate content: the break is not taken, its cues
    /// go on): a copied TS with 1 s GOPs says out at 4.5 s for 3 s and back at 7.5 s. Neither
    /// has a keyframe, so each segment starts at the next one (5 s, 8 s), the tags and the
    /// section move with it, and the stats count two moved splices.
    func testASourcesCuesPassOnAndMoveToTheNextKeyframeOfACopiedStream() throws {
        try assertPassedOnCues(transcoded: false)
    }

    /// The same source re-encoded: the encoder is asked for a keyframe at each splice, so
    /// nothing moves.
    func testAnEncodedStreamKeysAtTheSourcesSplices() throws {
        try assertPassedOnCues(transcoded: true)
    }

    /// Out at 4.5 s for 3 s, back at 7.5 s, in a source with a keyframe each second: copied, the
    /// cuts (and the tags, the sections' times) move to 5 and 8 s, and the push says so; encoded,
    /// they stay.
    private func assertPassedOnCues(transcoded: Bool) throws {
        let cued = try CuedTestMedia.make(in: dir, main: .a, seconds: 8, then: .b, for: 4,
                                          cues: [.init(eventID: 21, at: 4.5, duration: 3), .init(eventID: 21, at: 7.5, duration: nil)])
        let hls = try makeHLSDirectory()
        let result = try LivePushCLI.run(["push", cued, "file://\(hls.path)/index.m3u8?hls_time=2&hls_list_size=0", "--fast", "--json"]
                                         + (transcoded ? ["--transcode"] : []), timeout: 120)
        let (outAt, inAt) = transcoded ? (4.5, 7.5) : (5.0, 8.0)
        XCTAssertEqual(result.exitCode, 0, result.summary)
        let playlist = try HLSTestPlaylist(path: hls.appendingPathComponent("index.m3u8").path)
        print("HLSOutputTests passed-on cues: \(playlist.segments.map { ($0.uri, $0.start, $0.duration, $0.tags) })")
        let out = try XCTUnwrap(playlist.segments.first { $0.tag("#EXT-X-CUE-OUT:") != nil }, "a CUE-OUT")
        XCTAssertEqual(out.start, outAt, accuracy: 0.04, "at the splice, or the keyframe after it")
        XCTAssertEqual(out.tag("#EXT-X-CUE-OUT:DURATION=").flatMap(Double.init) ?? -1, 3, accuracy: 0.05)
        let back = try XCTUnwrap(playlist.segments.first { $0.tags.contains("#EXT-X-CUE-IN") }, "a CUE-IN")
        XCTAssertEqual(back.start, inAt, accuracy: 0.04)
        let sections = [out, back].compactMap { $0.tag("#EXT-OATCLS-SCTE35:") }
        let decoded = try PythonTools.threefive(sections)
        XCTAssertEqual(decoded.count, 2)
        for (cue, (time, isOut)) in zip(decoded, [(outAt, true), (inAt, false)]) {
            let command = cue["command"] as? [String: Any]
            XCTAssertEqual(command?["name"] as? String, "Splice Insert")
            XCTAssertEqual(command?["out_of_network_indicator"] as? Bool, isOut)
            XCTAssertEqual(command?["pts_time"] as? Double ?? -1, time, accuracy: 0.04, "moved with the cut")
        }
        let events = result.stdoutString.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let stopped = events.last { $0["event"] as? String == "stopped" }
        let output = ((stopped?["stats"] as? [String: Any])?["outputs"] as? [[String: Any]])?.first
        XCTAssertEqual((output?["hls"] as? [String: Any])?["splicesMoved"] as? Int, transcoded ? 0 : 2, "\(String(describing: output))")
        // And the push says so as it happens: each move, from the splice to its keyframe.
        let moves = events.filter { $0["event"] as? String == "cueMoved" }.map { ($0["from"] as? Double ?? -1, $0["to"] as? Double ?? -1) }
        XCTAssertEqual(moves.count, transcoded ? 0 : 2, "\(moves)")
        for (move, expected) in zip(moves, [(4.5, 5.0), (7.5, 8.0)]) {
            XCTAssertEqual(move.0, expected.0, accuracy: 0.04, "the cue's splice")
            XCTAssertEqual(move.1, expected.1, accuracy: 0.04, "the keyframe its segment starts with")
        }
    }
}
