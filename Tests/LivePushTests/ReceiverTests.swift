import Foundation
import LivePushLoopback
import LivePushWire
import XCTest

/// End-to-end tests of the embedded RTMP receiver.
final class ReceiverTests: XCTestCase {
    private func makeTempDir() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("receiver-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    func testStartStopAndTimeout() async throws {
        let receiver = RTMPReceiver(configuration: .init())
        let port = try receiver.start()
        defer { receiver.stop() }
        XCTAssertGreaterThan(port, 0)
        XCTAssertEqual(receiver.port, port)
        XCTAssertThrowsError(try receiver.start())
        do {
            _ = try await receiver.waitForPublishEnd(stream: "none", timeout: .milliseconds(100))
            XCTFail("expected a timeout")
        } catch let error as ReceiverError {
            XCTAssertEqual(error, .timeout(stream: "none"))
        }
        XCTAssertTrue(receiver.summaries().isEmpty)
        receiver.stop()
        receiver.stop()  // idempotent
        do {
            _ = try await receiver.waitForPublishEnd(stream: "none", timeout: .seconds(5))
            XCTFail("expected stopped")
        } catch let error as ReceiverError {
            XCTAssertEqual(error, .stopped)
        }
    }

    func testFFmpegPublishIsRecorded() async throws {
        guard let ffmpeg = WireTestTools.find("ffmpeg"), let ffprobe = WireTestTools.find("ffprobe") else {
            throw XCTSkip("ffmpeg/ffprobe not installed")
        }
        let dir = try makeTempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let receiver = RTMPReceiver(configuration: .init(recordDirectory: dir.path))
        let port = try receiver.start()
        defer { receiver.stop() }
        let events = receiver.makeEventStream()

        let out = try WireTestTools.run(ffmpeg, [
            "-hide_banner", "-loglevel", "error",
            "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25:d=2",
            "-f", "lavfi", "-i", "sine=d=2",
            "-c:v", "libx264", "-g", "25", "-c:a", "aac",
            "-f", "flv", "rtmp://127.0.0.1:\(port)/live/test",
        ], timeout: 60)
        XCTAssertEqual(out.status, 0, "ffmpeg failed: \(out.stderr)")

        let summary = try await receiver.waitForPublishEnd(stream: "test", timeout: .seconds(20))
        XCTAssertEqual(summary.app, "live")
        XCTAssertEqual(summary.stream, "test")
        XCTAssertEqual(summary.videoFrames, 50)
        XCTAssertEqual(summary.firstVideoFrameIsKeyframe, true)
        XCTAssertEqual(summary.videoKeyframes, 2)
        XCTAssertGreaterThan(summary.audioFrames, 80)  // 2 s of 44.1 kHz AAC ≈ 87 frames
        XCTAssertEqual(summary.sequenceHeaders, 2)
        XCTAssertGreaterThanOrEqual(summary.dataMessages, 1)
        XCTAssertEqual(summary.metadata[key: "width"], .number(320))
        XCTAssertEqual(summary.metadata[key: "height"], .number(240))
        XCTAssertTrue(summary.monotonic)
        XCTAssertEqual(summary.firstTimestampMs, 0)
        XCTAssertGreaterThanOrEqual(summary.durationMs, 1900)
        XCTAssertLessThan(summary.durationMs, 2200)
        XCTAssertGreaterThan(summary.bytes, 10_000)
        XCTAssertTrue(["FCUnpublish", "deleteStream", "disconnect"].contains(summary.endReason), summary.endReason)
        XCTAssertEqual(receiver.summaries().count, 1)

        // Events: connected, publishStarted, publishEnded, in that order.
        let got = await collectEvents(events, timeout: .seconds(10)) { got in
            got.contains { if case .publishEnded = $0 { return true } else { return false } }
        }
        let kinds: [String] = got.map { event in
            switch event {
            case .connected(let app, _): return "connected:\(app)"
            case .publishStarted(_, let stream): return "started:\(stream)"
            case .publishEnded(let s): return "ended:\(s.stream)"
            case .disconnected: return "disconnected"
            case .protocolError(let e): return "error:\(e)"
            case .limitReached(let limit, _): return "limit:\(limit)"
            }
        }
        XCTAssertEqual(kinds, ["connected:live", "started:test", "ended:test"])

        // The recording: readable by FLVFileReader and ffprobe.
        let path = try XCTUnwrap(summary.recordingPath)
        XCTAssertEqual(path, dir.appendingPathComponent("test.flv").path)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let tags = try FLVFileReader.tags(in: bytes)
        let script = try XCTUnwrap(tags.first { $0.type == .script })
        XCTAssertEqual(try AMF0.decode(script.body).first, .string("onMetaData"), "@setDataFrame is stripped")
        let videoFrames = tags.filter { $0.type == .video && $0.body.count > 1 && $0.body[1] == 1 }
        XCTAssertEqual(videoFrames.count, 50)
        XCTAssertEqual(videoFrames.first?.isKeyframe, true)
        XCTAssertEqual(videoFrames.map(\.timestampMs), (0..<50).map { UInt32($0 * 40) })

        let probe = try WireTestTools.run(ffprobe, ["-v", "error", "-count_packets", "-show_streams", "-of", "json", path])
        XCTAssertEqual(probe.status, 0, probe.stderr)
        let json = try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any]
        let streams = json?["streams"] as? [[String: Any]] ?? []
        let video = streams.first { $0["codec_type"] as? String == "video" }
        let audio = streams.first { $0["codec_type"] as? String == "audio" }
        XCTAssertEqual(video?["codec_name"] as? String, "h264")
        XCTAssertEqual(video?["nb_read_packets"] as? String, "50")
        XCTAssertEqual(video?["width"] as? Int, 320)
        XCTAssertEqual(audio?["codec_name"] as? String, "aac")
    }
}
