import Foundation
@testable import LivePush
import XCTest

/// CMAF from ``FragmentedMP4Muxer``, checked by FFmpeg: the repository's samples (H.264 with
/// and without B-frames, AAC) cut into 1 s fragments at keyframes, written as an HLS playlist
/// with `#EXT-X-MAP`; ffprobe must read every frame back from the playlist, and ffmpeg must
/// decode it without an error.
final class FragmentedMP4MuxerTests: XCTestCase {
    private static let media = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Media")

    override func setUpWithError() throws {
        guard MediaTestFiles.toolsAvailable else { throw XCTSkip("ffmpeg and ffprobe are needed") }
    }

    /// Muxes `sample` as the push would send it, cutting before the first keyframe 1 s or more
    /// into a fragment; returns the playlist's path and what was written.
    private func writePlaylist(_ sample: String, in files: MediaTestFiles) throws -> (playlist: String, video: Int, audio: Int, fragments: Int, videoEnd: Int64) {
        let source = try MediaInputFactory.open(path: Self.media.appendingPathComponent(sample).path)
        let packets = try MediaTestFiles.drain(source)
        let muxer = try FragmentedMP4Muxer(stream: source.info)
        XCTAssertEqual(Array(muxer.initSegment.dropFirst(4).prefix(4)), Array("ftyp".utf8))
        try Data(muxer.initSegment).write(to: URL(fileURLWithPath: files.path("init.mp4")))

        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:2", "#EXT-X-MEDIA-SEQUENCE:0",
                     "#EXT-X-PLAYLIST-TYPE:VOD", "#EXT-X-MAP:URI=\"init.mp4\""]
        var fragmentStart: Int64?, video = 0, audio = 0, fragments = 0, videoEnd: Int64 = 0
        func cut(at end: Int64) throws {
            let bytes = try muxer.cut()
            guard let start = fragmentStart, !bytes.isEmpty else { return }
            XCTAssertEqual(Array(bytes.dropFirst(4).prefix(4)), Array("moof".utf8), "a fragment starts with its moof")
            let name = "segment\(fragments).m4s"
            try Data(bytes).write(to: URL(fileURLWithPath: files.path(name)))
            lines += [String(format: "#EXTINF:%.3f,", Double(end - start) / 1e6), name]
            fragments += 1
        }
        for packet in packets where !packet.isSequenceHeader && (packet.kind == .video || packet.kind == .audio) {
            if packet.kind == .video, packet.isKeyframe, let start = fragmentStart, packet.dts - start >= 1_000_000 {
                try cut(at: packet.dts)
                fragmentStart = packet.dts
            }
            if fragmentStart == nil { fragmentStart = packet.dts }
            try muxer.write(packet)
            if packet.kind == .video { video += 1; videoEnd = max(videoEnd, packet.pts + packet.duration) } else { audio += 1 }
        }
        try cut(at: packets.last.map { $0.dts + $0.duration } ?? 0)
        lines.append("#EXT-X-ENDLIST")
        let playlist = files.path("index.m3u8")
        try (lines.joined(separator: "\n") + "\n").write(toFile: playlist, atomically: true, encoding: .utf8)
        return (playlist, video, audio, fragments, videoEnd)
    }

    private func assertReadBack(_ sample: String) throws {
        let files = try MediaTestFiles()
        let written = try writePlaylist(sample, in: files)
        XCTAssertGreaterThan(written.fragments, 1)
        // HLS also lists its program's streams: the first number is the stream's.
        let frames = try MediaTestFiles.run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-count_frames",
            "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", written.playlist])
        XCTAssertEqual(frames.split(whereSeparator: \.isNewline).compactMap { Int($0) }.first, written.video,
                       "\(sample): every picture decodes from the playlist")
        if written.audio > 0 {
            XCTAssertEqual(try MediaTestFiles.packetCount(written.playlist, "a"), written.audio, "\(sample): every sound frame")
        }
        // The fragments' decode times (tfdt) carry the stream's: the last picture ends where the source's does.
        let lastVideo = try MediaTestFiles.run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
            "packet=pts_time,duration_time", "-of", "csv=p=0", written.playlist]).split(whereSeparator: \.isNewline)
            .map { $0.split(separator: ",").compactMap { Double($0) }.reduce(0, +) }.max() ?? 0
        XCTAssertEqual(lastVideo, Double(written.videoEnd) / 1e6, accuracy: 0.05, "\(sample): the pictures end where they did")
        let decoded = try WireTestTools.run("/usr/bin/ffmpeg", ["-v", "error", "-i", written.playlist, "-f", "null", "-"])
        XCTAssertEqual(decoded.status, 0)
        XCTAssertEqual(decoded.stderr, "", "\(sample): ffmpeg decodes the playlist without an error")
    }

    func testH264AndAACFragmentsDecodeFromAPlaylist() throws {
        try assertReadBack("sample-h264-aac.mp4")
    }

    func testBFramesKeepTheirOrder() throws {
        try assertReadBack("sample-bframes.mp4")
    }

    func testAStreamWithoutTracksIsRefused() {
        XCTAssertThrowsError(try FragmentedMP4Muxer(stream: StreamInfo(video: nil, audio: nil, duration: 0))) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .outputSettingsInvalid)
        }
    }
}
