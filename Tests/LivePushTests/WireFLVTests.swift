import Foundation
import LivePushWire
import XCTest

final class WireFLVTests: XCTestCase {
    func testHeader() {
        XCTAssertEqual(
            FLVFileWriter.header(hasAudio: true, hasVideo: true),
            [0x46, 0x4C, 0x56, 0x01, 0x05, 0, 0, 0, 9, 0, 0, 0, 0])
        XCTAssertEqual(FLVFileWriter.header(hasAudio: false, hasVideo: true)[4], 0x01)
        XCTAssertEqual(FLVFileWriter.header(hasAudio: true, hasVideo: false)[4], 0x04)
    }

    func testTagBytes() {
        let tag = FLVFileWriter.tag(type: .video, timestampMs: 0x1234_5678, body: [0xAA, 0xBB])
        XCTAssertEqual(tag, [
            0x09, 0x00, 0x00, 0x02, 0x34, 0x56, 0x78, 0x12, 0x00, 0x00, 0x00,
            0xAA, 0xBB,
            0x00, 0x00, 0x00, 0x0D,
        ])
    }

    func testAVCBodies() {
        XCTAssertEqual(FLVBody.avcSequenceHeader([1, 2]), [0x17, 0x00, 0, 0, 0, 1, 2])
        XCTAssertEqual(FLVBody.avcFrame([9], keyframe: true, compositionTimeMs: 40), [0x17, 0x01, 0x00, 0x00, 0x28, 9])
        XCTAssertEqual(FLVBody.avcFrame([9], keyframe: false, compositionTimeMs: -40), [0x27, 0x01, 0xFF, 0xFF, 0xD8, 9])
        XCTAssertEqual(FLVBody.avcFrame([], keyframe: false, compositionTimeMs: 0x12345), [0x27, 0x01, 0x01, 0x23, 0x45])
        XCTAssertEqual(FLVBody.avcEndOfSequence(), [0x17, 0x02, 0, 0, 0])

        let neg = FLVTag(type: .video, timestampMs: 0, body: FLVBody.avcFrame([1], keyframe: false, compositionTimeMs: -40))
        XCTAssertEqual(neg.compositionTimeMs, -40)
        XCTAssertFalse(neg.isKeyframe)
        let pos = FLVTag(type: .video, timestampMs: 0, body: FLVBody.avcFrame([1], keyframe: true, compositionTimeMs: 80))
        XCTAssertEqual(pos.compositionTimeMs, 80)
        XCTAssertTrue(pos.isKeyframe)
        XCTAssertTrue(FLVTag(type: .video, timestampMs: 0, body: FLVBody.avcSequenceHeader([1])).isSequenceHeader)
    }

    func testAACBodies() {
        XCTAssertEqual(FLVBody.aacSequenceHeader([0x12, 0x10], sampleRate: 44100, channels: 2), [0xAF, 0x00, 0x12, 0x10])
        XCTAssertEqual(FLVBody.aacSequenceHeader([0x11, 0x88], sampleRate: 48000, channels: 1), [0xAF, 0x00, 0x11, 0x88])
        XCTAssertEqual(FLVBody.aacFrame([1, 2, 3], sampleRate: 44100, channels: 2), [0xAF, 0x01, 1, 2, 3])
        XCTAssertTrue(FLVTag(type: .audio, timestampMs: 0, body: [0xAF, 0x00, 0x12, 0x10]).isSequenceHeader)
        XCTAssertFalse(FLVTag(type: .audio, timestampMs: 0, body: [0xAF, 0x01]).isSequenceHeader)
    }

    func testMetadataBody() throws {
        let props = [AMF0Property("width", .number(320)), AMF0Property("height", .number(240))]
        let withSDF = FLVBody.metadata(props, withSetDataFrame: true)
        XCTAssertEqual(try AMF0.decode(withSDF), [.string("@setDataFrame"), .string("onMetaData"), .ecmaArray(props)])
        let plain = FLVBody.metadata(props, withSetDataFrame: false)
        XCTAssertEqual(try AMF0.decode(plain), [.string("onMetaData"), .ecmaArray(props)])
    }

    func testWriteAndReadBack() throws {
        var writer = FLVFileWriter(hasAudio: true, hasVideo: true)
        let meta = FLVBody.metadata([AMF0Property("duration", .number(0))], withSetDataFrame: false)
        writer.append(type: .script, timestampMs: 0, body: meta)
        writer.append(type: .video, timestampMs: 0, body: FLVBody.avcSequenceHeader([1, 0x64, 0, 0x1F]))
        writer.append(type: .audio, timestampMs: 0, body: FLVBody.aacSequenceHeader([0x12, 0x10], sampleRate: 44100, channels: 2))
        writer.append(type: .video, timestampMs: 40, body: FLVBody.avcFrame([0, 0, 0, 1, 0x65], keyframe: true, compositionTimeMs: -40))
        writer.append(type: .audio, timestampMs: 0x0100_0000, body: FLVBody.aacFrame([7], sampleRate: 44100, channels: 2))
        let tags = try FLVFileReader.tags(in: writer.bytes)
        XCTAssertEqual(tags.map(\.type), [.script, .video, .audio, .video, .audio])
        XCTAssertEqual(tags.map(\.timestampMs), [0, 0, 0, 40, 0x0100_0000])
        XCTAssertEqual(tags[0].body, meta)
        XCTAssertEqual(tags[3].compositionTimeMs, -40)
        let header = try FLVFileReader.header(in: writer.bytes)
        XCTAssertTrue(header.hasAudio && header.hasVideo)

        // Truncation is detected, or tolerated when asked.
        let cut = Array(writer.bytes.dropLast(3))
        XCTAssertThrowsError(try FLVFileReader.tags(in: cut))
        XCTAssertEqual(try FLVFileReader.tags(in: cut, allowTruncatedTail: true).count, 4)
        XCTAssertThrowsError(try FLVFileReader.tags(in: [0x46, 0x4C, 0x57, 1, 5, 0, 0, 0, 9]))
    }

    /// ffprobe accepts a file from FLVFileWriter (metadata + AAC audio; no video needed).
    func testFFprobeReadsWrittenFile() throws {
        guard let ffprobe = WireTestTools.find("ffprobe") else { throw XCTSkip("ffprobe not installed") }
        var writer = FLVFileWriter(hasAudio: true, hasVideo: false)
        writer.append(type: .script, timestampMs: 0, body: FLVBody.metadata(
            [AMF0Property("audiocodecid", .number(10)), AMF0Property("audiosamplerate", .number(44100))],
            withSetDataFrame: false))
        // AudioSpecificConfig: AAC-LC, 44.1 kHz, stereo.
        writer.append(type: .audio, timestampMs: 0, body: FLVBody.aacSequenceHeader([0x12, 0x10], sampleRate: 44100, channels: 2))
        for i in 0..<10 {
            writer.append(type: .audio, timestampMs: UInt32(i * 23), body: FLVBody.aacFrame([0x21, 0x10, 0x04, 0x60, 0x8C, 0x1C], sampleRate: 44100, channels: 2))
        }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("wire-\(UUID().uuidString).flv")
        try Data(writer.bytes).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let out = try WireTestTools.run(ffprobe, ["-v", "error", "-count_packets", "-show_streams", "-of", "json", url.path])
        XCTAssertEqual(out.status, 0, out.stderr)
        let json = try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any]
        let streams = json?["streams"] as? [[String: Any]] ?? []
        XCTAssertEqual(streams.count, 1)
        XCTAssertEqual(streams.first?["codec_name"] as? String, "aac")
        XCTAssertEqual(streams.first?["nb_read_packets"] as? String, "10")
    }

    /// FLVFileReader parses a file produced by ffmpeg's FLV muxer.
    func testReadFFmpegFLV() throws {
        guard let ffmpeg = WireTestTools.find("ffmpeg") else { throw XCTSkip("ffmpeg not installed") }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("wire-ff-\(UUID().uuidString).flv")
        defer { try? FileManager.default.removeItem(at: url) }
        let out = try WireTestTools.run(ffmpeg, [
            "-hide_banner", "-loglevel", "error", "-y",
            "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25:d=1",
            "-f", "lavfi", "-i", "sine=d=1",
            "-c:v", "libx264", "-g", "25", "-c:a", "aac", "-f", "flv", url.path,
        ])
        XCTAssertEqual(out.status, 0, out.stderr)
        let bytes = [UInt8](try Data(contentsOf: url))
        let tags = try FLVFileReader.tags(in: bytes)
        XCTAssertEqual(tags.first?.type, .script)
        let script = try AMF0.decode(tags[0].body)
        XCTAssertEqual(script.first, .string("onMetaData"))
        XCTAssertEqual(script.dropFirst().first?["width"], .number(160))

        let video = tags.filter { $0.type == .video }
        XCTAssertEqual(video.first?.isSequenceHeader, true)
        // ffmpeg's muxer ends AVC with an end-of-sequence tag (AVC packet type 2).
        XCTAssertEqual(video.last?.body.prefix(2), [0x17, 0x02])
        let frames = video.filter { $0.body.count > 1 && $0.body[1] == 1 }
        XCTAssertEqual(frames.count, 25)
        XCTAssertEqual(frames.first?.isKeyframe, true)
        XCTAssertEqual(frames.first?.timestampMs, 0)
        XCTAssertEqual(frames.last?.timestampMs, 960)
        XCTAssertEqual(zip(frames, frames.dropFirst()).allSatisfy { $0.timestampMs <= $1.timestampMs }, true)
        XCTAssertTrue(frames.contains { ($0.compositionTimeMs ?? 0) > 0 }, "B-frames give positive composition times")

        let audio = tags.filter { $0.type == .audio }
        XCTAssertEqual(audio.first?.isSequenceHeader, true)
        XCTAssertGreaterThan(audio.count, 40)
        XCTAssertTrue(audio.allSatisfy { $0.body.first == 0xAF })
    }
}

/// Process helpers for the Wire and Receiver tests.
enum WireTestTools {
    static func find(_ name: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let path = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs a process to completion, killing it after `timeout` seconds.
    static func run(_ path: String, _ arguments: [String], timeout: TimeInterval = 60) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let outPipe = Pipe(), errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let pid = process.processIdentifier
        let timer = DispatchSource.makeTimerSource()
        timer.schedule(deadline: .now() + timeout)
        timer.setEventHandler { kill(pid, SIGKILL) }
        timer.resume()
        // Read both pipes concurrently so neither fills up.
        nonisolated(unsafe) var errData = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            errData = errPipe.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outData = outPipe.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        timer.cancel()
        return Output(
            status: process.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }
}
