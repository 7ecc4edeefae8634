import Foundation
import XCTest

/// The "CMAF: `hls_segment_type=fmp4` has `#EXT-X-MAP` and decodes", against peers
/// nobody here wrote: Python's http.server serves what a push wrote, ffmpeg and ffprobe read
/// it, threefive decodes the cue tags' SCTE-35.
final class HLSCMAFTests: XCTestCase {
    private var dir: URL!

    override func setUpWithError() throws {
        dir = try TestMedia.makeTemporaryDirectory(prefix: "HLSCMAFTests")
    }

    override func tearDown() {
        if let dir { TestMedia.removeTemporaryDirectory(dir) }
        dir = nil
    }

    /// A copied TS with 1 s GOPs and its own SCTE-35 (out at 4.5 s for 3 s, back at 7.5 s), 12 s,
    /// pushed `--fast` as CMAF: one init segment mapped once, `.m4s` segments cut where the TS
    /// ones are (5 s and 8 s, at the keyframes after the splices), every picture and sound frame
    /// read back over HTTP without an error, the cues as tags whose sections say where the
    /// segment's first picture is on the fragments' timeline (the TS one: output time + 1.4 s).
    func testACopiedStreamWithCuesAsCMAFHasItsMapAndDecodes() async throws {
        let cued = try CuedTestMedia.make(in: dir, main: .a, seconds: 8, then: .b, for: 4,
                                          cues: [.init(eventID: 21, at: 4.5, duration: 3), .init(eventID: 21, at: 7.5, duration: nil)])
        let source = try FFProbe.run(cued)
        let hls = dir.appendingPathComponent("hls")
        try FileManager.default.createDirectory(at: hls, withIntermediateDirectories: true)
        let result = try LivePushCLI.run(["push", cued, "file://\(hls.path)/index.m3u8?hls_time=2&hls_list_size=0&hls_segment_type=fmp4",
                                          "--fast", "--json"], timeout: 120)
        XCTAssertEqual(result.exitCode, 0, result.summary)

        let text = try String(contentsOfFile: hls.appendingPathComponent("index.m3u8").path, encoding: .utf8)
        let playlist = try HLSTestPlaylist(text: text)
        print("HLSCMAFTests: \(playlist.segments.map { ($0.uri, $0.start, $0.duration, $0.tags) })")
        XCTAssertEqual(playlist.version, 7)
        XCTAssertTrue(playlist.ended)
        XCTAssertEqual(text.components(separatedBy: "#EXT-X-MAP:URI=\"index_init.mp4\"").count, 2, "mapped once: \(text)")
        XCTAssertEqual(playlist.segments.first?.tags.first, "#EXT-X-MAP:URI=\"index_init.mp4\"")
        XCTAssertTrue(playlist.segments.allSatisfy { $0.uri.hasSuffix(".m4s") })
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: hls.path)),
                       Set(playlist.segments.map(\.uri) + ["index.m3u8", "index_init.mp4"]))
        // As long as the source's pictures (the cued TS is a little under its 12 s).
        let sourceTimes = source.videoPackets.compactMap(\.ptsTime)
        let sourceSpan = (sourceTimes.max() ?? 0) - (sourceTimes.min() ?? 0)
        XCTAssertEqual(playlist.totalDuration, sourceSpan + 0.04, accuracy: 0.1)

        let out = try XCTUnwrap(playlist.segments.first { $0.tag("#EXT-X-CUE-OUT:") != nil }, "a CUE-OUT")
        XCTAssertEqual(out.start, 5, accuracy: 0.04, "at the keyframe after the splice")
        XCTAssertEqual(out.tag("#EXT-X-CUE-OUT:DURATION=").flatMap(Double.init) ?? -1, 3, accuracy: 0.05)
        let back = try XCTUnwrap(playlist.segments.first { $0.tags.contains("#EXT-X-CUE-IN") }, "a CUE-IN")
        XCTAssertEqual(back.start, 8, accuracy: 0.04)
        XCTAssertNotNil(out.tag("#EXT-X-DATERANGE:"))
        let decoded = try PythonTools.threefive([out, back].compactMap { $0.tag("#EXT-OATCLS-SCTE35:") })
        XCTAssertEqual(decoded.count, 2)
        for (cue, time) in zip(decoded, [5.0, 8.0]) {
            XCTAssertEqual((cue["command"] as? [String: Any])?["pts_time"] as? Double ?? -1, time, accuracy: 0.04)
            XCTAssertEqual((cue["info_section"] as? [String: Any])?["pts_adjustment"] as? Double ?? -1, 1.4, accuracy: 0.001)
        }
        // The break's segment, read with its init segment: a keyframe first, at splice + pts_adjustment.
        let joined = dir.appendingPathComponent("out.mp4")
        try (Data(contentsOf: hls.appendingPathComponent("index_init.mp4")) + Data(contentsOf: hls.appendingPathComponent(out.uri)))
            .write(to: joined)
        let segment = try FFProbe.run(joined.path)
        XCTAssertTrue(segment.firstVideoIsKeyframe)
        XCTAssertEqual(try XCTUnwrap(segment.videoPackets.compactMap(\.ptsTime).min()), 6.4, accuracy: 0.04)

        // Over HTTP: ffmpeg decodes it without a word, and every frame is there, where it was.
        let server = try await HLSDirectoryServer(directory: hls.path)
        let decodedAll = try ProcessRunner.run("ffmpeg", ["-v", "error", "-nostdin", "-i", server.url("index.m3u8"), "-f", "null", "-"],
                                               timeout: 60)
        XCTAssertTrue(decodedAll.succeeded, decodedAll.summary)
        XCTAssertEqual(decodedAll.stderrString, "", "ffmpeg's errors")
        let probe = try FFProbe.run(server.url("index.m3u8"), timeout: 60)
        XCTAssertEqual(probe.videoPackets.count, source.videoPackets.count, "every picture")
        XCTAssertLessThanOrEqual(abs(probe.audioPackets.count - source.audioPackets.count), 2,
                                 "every sound frame: \(probe.audioPackets.count) of \(source.audioPackets.count)")
        let times = probe.videoPackets.compactMap(\.ptsTime)
        XCTAssertEqual((times.max() ?? 0) - (times.min() ?? 0), sourceSpan, accuracy: 0.001, "the source's pictures, where they were")
        XCTAssertEqual(times.min() ?? 0, 1.4, accuracy: 0.05, "on the TS timeline")
        await server.stop()
    }
}
