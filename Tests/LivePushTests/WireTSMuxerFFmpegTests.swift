import Foundation
import LivePushWire
import XCTest

/// The MPEG-TS muxer checked by an independent demuxer and decoder: the repository's samples
/// (through FLV, whose tags give avcC, AVCC frames, raw AAC and the AudioSpecificConfig) and
/// an HEVC clip made with libx265 (read from MP4 by ffprobe) are muxed with SCTE-35 cues; ffprobe
/// must decode every frame, list the cue stream as scte_35 with the cues' bytes, and read the
/// timestamps the muxer promises; ffmpeg must decode the file without a single error.
final class WireTSMuxerFFmpegTests: XCTestCase {
    private var directory: URL!
    private var ffmpeg = "", ffprobe = ""
    private static let media = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Media")

    override func setUpWithError() throws {
        guard let ffmpeg = WireTestTools.find("ffmpeg"), let ffprobe = WireTestTools.find("ffprobe") else {
            throw XCTSkip("ffmpeg and ffprobe are needed")
        }
        (self.ffmpeg, self.ffprobe) = (ffmpeg, ffprobe)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("livepush-ts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let directory { try FileManager.default.removeItem(at: directory) }
    }

    /// What the test handed the muxer: frames per track, the video timestamps (µs), the cues.
    private struct Written {
        var videoFrames = 0, audioFrames = 0
        var videoTimes: [(pts: Int64, dts: Int64)] = []
        var cues: [[UInt8]] = []
    }

    /// Out at 1 s for 1.5 s, back at 2.5 s; each written when the stream reaches its time.
    private let cueTimes: [(at: Int64, section: [UInt8])] = [
        (1_000_000, SpliceInfoSection(command: .insert(SpliceInsert(
            eventID: 1, spliceTime: TSClock.ticks90kHz(1_000_000), breakDuration: 135_000))).encoded()),
        (2_500_000, SpliceInfoSection(command: .insert(SpliceInsert(
            eventID: 1, outOfNetwork: false, spliceTime: TSClock.ticks90kHz(2_500_000)))).encoded()),
    ]

    private func writeDueCues(_ muxer: inout TSMuxer, at time: Int64, _ written: inout Written, into out: inout [UInt8]) {
        while written.cues.count < cueTimes.count, cueTimes[written.cues.count].at <= time {
            let cue = cueTimes[written.cues.count].section
            muxer.writeSection(cue, into: &out)
            written.cues.append(cue)
        }
    }

    /// Remuxes `source` to FLV with ffmpeg, and its tags to MPEG-TS with TSMuxer.
    private func muxThroughFLV(_ source: String) throws -> (ts: String, flv: String, written: Written) {
        let flv = directory.appendingPathComponent("source.flv").path
        let made = try WireTestTools.run(ffmpeg, ["-v", "error", "-y", "-i", Self.media.appendingPathComponent(source).path,
                                                  "-c", "copy", "-f", "flv", flv])
        XCTAssertEqual(made.status, 0, made.stderr)
        let tags = try FLVFileReader.tags(in: [UInt8](Data(contentsOf: URL(fileURLWithPath: flv))))
        let avcC = tags.first { $0.type == .video && $0.isSequenceHeader }.map { Array($0.body.dropFirst(5)) }
        let asc = tags.first { $0.type == .audio && $0.isSequenceHeader }.map { Array($0.body.dropFirst(2)) }
        var muxer = try TSMuxer(.init(video: avcC == nil ? nil : .h264, videoConfiguration: avcC ?? [],
                                      audio: try asc.map { try AACConfiguration(audioSpecificConfig: $0) }, scte35: true))
        var out: [UInt8] = [], written = Written()
        for tag in tags where tag.body.count > 1 && tag.body[1] == 1 {  // frames, not headers or the end of sequence
            let time = Int64(tag.timestampMs) * 1_000
            writeDueCues(&muxer, at: time, &written, into: &out)
            if tag.type == .video {
                let pts = time + Int64(tag.compositionTimeMs ?? 0) * 1_000
                muxer.writeVideo(Array(tag.body.dropFirst(5)), dts: time, pts: pts, keyframe: tag.isKeyframe, into: &out)
                written.videoFrames += 1
                written.videoTimes.append((pts, time))
            } else if tag.type == .audio {
                muxer.writeAudio(Array(tag.body.dropFirst(2)), pts: time, into: &out)
                written.audioFrames += 1
            }
        }
        XCTAssertEqual(out.count % TSMuxer.packetSize, 0)
        let ts = directory.appendingPathComponent("out.ts").path
        try Data(out).write(to: URL(fileURLWithPath: ts))
        return (ts, flv, written)
    }

    func testH264AndAACFromTheSampleDecodeCompletely() throws {
        let (ts, flv, written) = try muxThroughFLV("sample-h264-aac.mp4")
        XCTAssertEqual([written.videoFrames, written.audioFrames], [100, 174])
        try check(ts, written: written, videoCodec: "h264", source: flv)
    }

    func testH264WithBFramesKeepsItsTimestamps() throws {
        let (ts, flv, written) = try muxThroughFLV("sample-bframes.mp4")
        XCTAssertTrue(written.videoTimes.contains { $0.pts != $0.dts }, "the sample reorders frames")
        try check(ts, written: written, videoCodec: "h264", source: flv)
    }

    func testAudioOnly() throws {
        let (ts, flv, written) = try muxThroughFLV("sample-audio-only.m4a")
        XCTAssertEqual([written.videoFrames, written.audioFrames], [0, 174])
        try check(ts, written: written, videoCodec: nil, source: flv)
    }

    /// HEVC with B-frames from libx265 in MP4: ffprobe gives the hvcC (extradata) and each
    /// sample's bytes, times and key flag.
    func testHEVCFromAnMP4DecodesCompletely() throws {
        let mp4 = directory.appendingPathComponent("hevc.mp4").path
        let made = try WireTestTools.run(ffmpeg, ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25",
                                                  "-t", "2", "-c:v", "libx265", "-x265-params", "log-level=none:keyint=25",
                                                  "-tag:v", "hvc1", mp4])
        guard made.status == 0 else { throw XCTSkip("no libx265: \(made.stderr)") }
        let probe = try WireTestTools.run(ffprobe, ["-v", "error", "-select_streams", "v:0", "-show_streams",
                                                    "-show_packets", "-show_data", "-of", "json", mp4])
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any])
        let stream = try XCTUnwrap((json["streams"] as? [[String: Any]])?.first)
        let timeBase = try XCTUnwrap(stream["time_base"] as? String).split(separator: "/").compactMap { Int64($0) }
        let micros = { (value: Any?) -> Int64 in ((value as? Int).map(Int64.init) ?? 0) * 1_000_000 * timeBase[0] / timeBase[1] }
        var muxer = try TSMuxer(.init(video: .hevc, videoConfiguration: hex(stream["extradata"]), scte35: true))
        var out: [UInt8] = [], written = Written()
        for packet in json["packets"] as? [[String: Any]] ?? [] {
            let dts = micros(packet["dts"]), pts = micros(packet["pts"])
            writeDueCues(&muxer, at: dts, &written, into: &out)
            muxer.writeVideo(hex(packet["data"]), dts: dts, pts: pts,
                             keyframe: (packet["flags"] as? String)?.hasPrefix("K") == true, into: &out)
            written.videoFrames += 1
            written.videoTimes.append((pts, dts))
        }
        XCTAssertEqual(written.videoFrames, 50)
        let ts = directory.appendingPathComponent("hevc.ts").path
        try Data(out).write(to: URL(fileURLWithPath: ts))
        try check(ts, written: written, videoCodec: "hevc", source: mp4)
    }

    /// ffprobe's hex dump (`-show_data`): "00000000: 0000 09b2 2801 ...  ascii" per 16 bytes.
    private func hex(_ dump: Any?) -> [UInt8] {
        let digits = ((dump as? String) ?? "").split(separator: "\n").flatMap { line in
            line.dropFirst(10).prefix(39).filter { !$0.isWhitespace }
        }
        return stride(from: 0, to: digits.count - 1, by: 2).compactMap { UInt8(String(digits[$0...($0 + 1)]), radix: 16) }
    }

    private func check(_ ts: String, written: Written, videoCodec: String?, source: String,
                       file: StaticString = #filePath, line: UInt = #line) throws {
        // Every frame decodes, as many as the source has.
        let sourceCounts = try frameCounts(source)
        let counts = try frameCounts(ts)
        if let videoCodec {
            XCTAssertEqual(counts[videoCodec], written.videoFrames, "video frames", file: file, line: line)
            XCTAssertEqual(counts[videoCodec], sourceCounts[videoCodec], file: file, line: line)
        }
        if written.audioFrames > 0 {
            XCTAssertEqual(counts["aac"], written.audioFrames, "audio frames", file: file, line: line)
            XCTAssertEqual(counts["aac"], sourceCounts["aac"], file: file, line: line)
        }
        print("ffprobe \(URL(fileURLWithPath: ts).lastPathComponent): frames \(counts), source \(sourceCounts)")

        // The cues: a data stream ffmpeg knows as SCTE-35, with each section intact.
        let cues = try WireTestTools.run(ffprobe, ["-v", "error", "-select_streams", "d", "-show_streams", "-show_packets",
                                                   "-show_data", "-of", "json", ts])
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(cues.stdout.utf8)) as? [String: Any])
        let streams = json["streams"] as? [[String: Any]] ?? []
        XCTAssertEqual(streams.map { $0["codec_name"] as? String }, ["scte_35"], file: file, line: line)
        XCTAssertEqual(streams.first?["id"] as? String, "0x102", file: file, line: line)
        XCTAssertEqual((json["packets"] as? [[String: Any]] ?? []).map { hex($0["data"]) }, written.cues,
                       file: file, line: line)

        // The video timestamps are the promised mapping, exactly.
        if videoCodec != nil {
            let times = try WireTestTools.run(ffprobe, ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                        "packet=pts,dts", "-of", "csv=p=0", ts])
            let read = times.stdout.split(separator: "\n").map { $0.split(separator: ",").compactMap { UInt64($0) } }
            let expected = written.videoTimes.map { [TSClock.ticks90kHz($0.pts), TSClock.ticks90kHz($0.dts)] }
            XCTAssertEqual(read, expected, file: file, line: line)
        }

        // A full decode reports nothing.
        let decode = try WireTestTools.run(ffmpeg, ["-v", "error", "-i", ts, "-f", "null", "-"])
        XCTAssertEqual(decode.status, 0, file: file, line: line)
        XCTAssertEqual(decode.stderr, "", file: file, line: line)
    }

    /// Decoded frames per codec name, by `ffprobe -count_frames`.
    private func frameCounts(_ path: String) throws -> [String: Int] {
        let out = try WireTestTools.run(ffprobe, ["-v", "error", "-count_frames", "-show_streams", "-of", "json", path])
        XCTAssertEqual(out.status, 0, out.stderr)
        let json = try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any]
        var counts: [String: Int] = [:]
        for stream in json?["streams"] as? [[String: Any]] ?? [] {
            if let name = stream["codec_name"] as? String, let frames = (stream["nb_read_frames"] as? String).flatMap(Int.init) {
                counts[name] = frames
            }
        }
        return counts
    }
}
