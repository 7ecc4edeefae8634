import Foundation
import XCTest

/// The "A ladder": a 720p file with `--output-video 0=1280x720@2500 --output-video
/// 0=640x360@800` to one HLS output. The master playlist lists both variants with their
/// resolution and a bandwidth near what their segments measure; ffmpeg decodes each over HTTP;
/// both have the same segments (count and lengths).
final class HLSLadderTests: XCTestCase {
    private var dir: URL!

    override func setUpWithError() throws {
        dir = try TestMedia.makeTemporaryDirectory(prefix: "HLSLadderTests")
    }

    override func tearDown() {
        if let dir { TestMedia.removeTemporaryDirectory(dir) }
        dir = nil
    }

    func testATwoRungLadderWritesAMasterAndAlignedVariants() async throws {
        // 6 s of 720p, 25 fps, moving (testsrc), with a tone; 1 s GOPs.
        let source = dir.appendingPathComponent("720p.mp4").path
        let made = try ProcessRunner.run("ffmpeg", ["-v", "error", "-nostdin", "-y",
            "-f", "lavfi", "-i", "testsrc=size=1280x720:rate=25:duration=6", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=6",
            "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", source], timeout: 120)
        XCTAssertTrue(made.succeeded, made.summary)
        let hls = dir.appendingPathComponent("hls")
        try FileManager.default.createDirectory(at: hls, withIntermediateDirectories: true)
        let result = try LivePushCLI.run(["push", source, "file://\(hls.path)/index.m3u8?hls_time=2&hls_list_size=0",
                                          "--output-video", "0=1280x720@2500", "--output-video", "0=640x360@800",
                                          "--preset", "ultrafast", "--fast", "--json"], timeout: 180)
        XCTAssertEqual(result.exitCode, 0, result.summary)

        let master = try String(contentsOfFile: hls.appendingPathComponent("index.m3u8").path, encoding: .utf8)
        print("HLSLadderTests master:\n\(master)")
        let lines = master.split(separator: "\n").map(String.init)
        let infos = lines.filter { $0.hasPrefix("#EXT-X-STREAM-INF:") }
        XCTAssertEqual(infos.count, 2, master)
        let uris = lines.indices.filter { lines[$0].hasPrefix("#EXT-X-STREAM-INF:") }.map { lines[$0 + 1] }
        XCTAssertEqual(uris, ["index_v0.m3u8", "index_v1.m3u8"])
        let server = try await HLSDirectoryServer(directory: hls.path)
        var segmentLists: [[Double]] = []
        for (info, (uri, resolution)) in zip(infos, zip(uris, ["1280x720", "640x360"])) {
            XCTAssertTrue(info.contains("RESOLUTION=\(resolution)"), info)
            XCTAssertTrue(info.contains("CODECS=\"avc1."), info)
            XCTAssertTrue(info.contains(",mp4a.40.2\""), info)
            XCTAssertTrue(info.contains("FRAME-RATE=25.000"), info)
            let playlist = try HLSTestPlaylist(path: hls.appendingPathComponent(uri).path)
            XCTAssertTrue(playlist.ended)
            segmentLists.append(playlist.segments.map(\.duration))
            // The measured rate: every segment's bytes over the playlist's length.
            let bytes = try playlist.segments.reduce(0) { total, segment in
                total + ((try FileManager.default.attributesOfItem(atPath: hls.appendingPathComponent(segment.uri).path)[.size] as? Int) ?? 0)
            }
            let measured = Double(bytes * 8) / playlist.totalDuration
            let average = Double(Self.attribute("AVERAGE-BANDWIDTH", in: info) ?? 0)
            let peak = Double(Self.attribute("BANDWIDTH", in: info) ?? 0)
            print("HLSLadderTests \(uri): measured \(Int(measured)) bit/s, AVERAGE-BANDWIDTH \(Int(average)), BANDWIDTH \(Int(peak)), segments \(segmentLists.last!)")
            XCTAssertEqual(average, measured, accuracy: measured * 0.3, "\(uri): AVERAGE-BANDWIDTH")
            XCTAssertEqual(peak, measured, accuracy: measured * 0.3, "\(uri): BANDWIDTH")
            XCTAssertGreaterThanOrEqual(peak, average)
            // Each variant decodes over HTTP without an error, at its size, and lasts the source.
            let decoded = try ProcessRunner.run("ffmpeg", ["-v", "error", "-nostdin", "-i", server.url(uri), "-f", "null", "-"], timeout: 60)
            XCTAssertTrue(decoded.succeeded, decoded.summary)
            XCTAssertEqual(decoded.stderrString, "", "\(uri): ffmpeg's errors")
            let probe = try FFProbe.run(server.url(uri), timeout: 60)
            XCTAssertEqual("\(probe.videoStream?.width ?? 0)x\(probe.videoStream?.height ?? 0)", resolution)
            XCTAssertEqual(probe.videoPackets.count, 150, "\(uri): every picture")
            XCTAssertEqual(playlist.totalDuration, 6, accuracy: 0.1)
        }
        XCTAssertEqual(segmentLists.count, 2)
        XCTAssertEqual(segmentLists.first, segmentLists.last, "the same segments: count and lengths")
        XCTAssertGreaterThanOrEqual(segmentLists.first?.count ?? 0, 3)
        // The master decodes too: a player starts on a variant.
        let decodedMaster = try ProcessRunner.run("ffmpeg", ["-v", "error", "-nostdin", "-i", server.url("index.m3u8"), "-map", "0:v:0",
                                                             "-f", "null", "-"], timeout: 60)
        XCTAssertTrue(decodedMaster.succeeded, decodedMaster.summary)
        await server.stop()
    }

    /// A copied source's own SCTE-35 (out at 4.5 s for 3 s, back at 7.5 s, 1 s GOPs) with a
    /// ladder: the variants (decoded once, encoded twice) are cut alike, and every media playlist
    /// carries the break's tags on the same segment.
    func testEveryVariantCarriesTheCueTagsOnTheSameSegments() throws {
        let cued = try CuedTestMedia.make(in: dir, main: .a, seconds: 8, then: .b, for: 4,
                                          cues: [.init(eventID: 21, at: 4.5, duration: 3), .init(eventID: 21, at: 7.5, duration: nil)])
        let hls = dir.appendingPathComponent("hls")
        try FileManager.default.createDirectory(at: hls, withIntermediateDirectories: true)
        let result = try LivePushCLI.run(["push", cued, "file://\(hls.path)/index.m3u8?hls_time=2&hls_list_size=0",
                                          "--output-video", "0=320x240@500", "--output-video", "0=160x120@200",
                                          "--preset", "ultrafast", "--gop", "1", "--fast"], timeout: 180)
        XCTAssertEqual(result.exitCode, 0, result.summary)
        let variants = try (0..<2).map { try HLSTestPlaylist(path: hls.appendingPathComponent("index_v\($0).m3u8").path) }
        for variant in variants {
            print("HLSLadderTests cues: \(variant.segments.map { ($0.uri, $0.start, $0.duration, $0.tags.count) })")
        }
        XCTAssertEqual(variants[0].segments.map(\.duration), variants[1].segments.map(\.duration), "the same cuts")
        for variant in variants {
            let out = try XCTUnwrap(variant.segments.first { $0.tag("#EXT-X-CUE-OUT:") != nil }, "a CUE-OUT")
            XCTAssertEqual(out.start, 4.5, accuracy: 0.04, "at the splice: the renditions' encodes key there")
            let back = try XCTUnwrap(variant.segments.first { $0.tags.contains("#EXT-X-CUE-IN") }, "a CUE-IN")
            XCTAssertEqual(back.start, 7.5, accuracy: 0.04)
        }
        XCTAssertEqual(variants[0].segments.map(\.tags), variants[1].segments.map(\.tags), "the same tags on the same segments")
    }

    /// A ladder on an output that carries one video is refused at the start, with a sentence.
    func testALadderOnAnSRTOutputIsRefused() throws {
        let result = try LivePushCLI.run(["push", TestMedia.path(.h264AAC), "srt://127.0.0.1:1",
                                          "--output-video", "0=640x360@800", "--output-video", "0=320x180@300"], timeout: 30)
        XCTAssertNotEqual(result.exitCode, 0)
        XCTAssertTrue(result.stderrString.contains("HLS output"), result.summary)
        XCTAssertTrue(result.stderrString.contains("an SRT output carries one video"), result.summary)
    }

    private static func attribute(_ name: String, in line: String) -> Int? {
        line.split(separator: ":", maxSplits: 1).last?.split(separator: ",")
            .first { $0.hasPrefix("\(name)=") }.flatMap { Int($0.dropFirst(name.count + 1)) }
    }
}
