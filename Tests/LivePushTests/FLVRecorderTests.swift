import XCTest
@testable import LivePush

/// The recorder's writes run as jobs on the recording workers: a `--fast` recording larger than
/// the queue's cap is whole when `finish()` returns, and one stopped before its first packet is
/// still a valid file.
final class FLVRecorderTests: XCTestCase {
    private let info = StreamInfo(
        video: VideoTrackInfo(width: 64, height: 64, frameRate: 25, bitrate: 0, decoderConfiguration: [1, 0x64, 0, 0x1f]),
        audio: nil, duration: 0)

    private func temporaryPath() -> String {
        let path = NSTemporaryDirectory() + "flvrecorder-\(UInt64.random(in: 0...UInt64.max)).flv"
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    /// The FLV tags in `bytes`: (type, body size), walking the file from its header to its end.
    private func tags(_ bytes: [UInt8]) -> [(type: UInt8, size: Int)]? {
        guard bytes.count >= 13, bytes[0..<3].elementsEqual("FLV".utf8) else { return nil }
        var tags: [(type: UInt8, size: Int)] = []
        var offset = 13
        while offset + 11 <= bytes.count {
            let size = Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard offset + 11 + size + 4 <= bytes.count else { return nil }  // cut short
            tags.append((bytes[offset], size))
            offset += 11 + size + 4
        }
        return offset == bytes.count ? tags : nil
    }

    func testAFastRecordingLargerThanItsQueueIsWholeWhenFinishReturns() throws {
        let path = temporaryPath()
        let recorder = try FLVRecorder(path: path, info: info, waitsWhenFull: true) { error in
            XCTFail("\(error)")
        }
        // 48 MiB, three times the queue's cap, offered as fast as the test can: the offers wait for room.
        let packets = 240
        let payload = [UInt8](repeating: 0x42, count: 200 * 1024)
        for index in 0..<packets {
            let time = Int64(index) * 40_000
            recorder.offer(MediaPacket(kind: .video, data: payload, dts: time, pts: time, duration: 40_000,
                                       importance: index % 25 == 0 ? .key : .reference))
        }
        recorder.finish()
        // Read at once: finish returned after the file was closed, so nothing is still on its way.
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let written = try XCTUnwrap(tags(bytes), "the file is whole to its last tag")
        XCTAssertEqual(written.filter { $0.type == 9 && $0.size > payload.count }.count, packets, "every frame written")
        XCTAssertEqual(recorder.figures.dropped, 0)
        XCTAssertEqual(recorder.figures.written, Int64(bytes.count - 13))
    }

    func testARecordingFinishedBeforeItsFirstPacketIsAValidFile() throws {
        let path = temporaryPath()
        let recorder = try FLVRecorder(path: path, info: info, waitsWhenFull: false) { error in
            XCTFail("\(error)")
        }
        recorder.finish()
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let written = try XCTUnwrap(tags(bytes))
        XCTAssertEqual(written.first?.type, 18, "onMetaData first")
        XCTAssertTrue(written.contains { $0.type == 9 }, "the video's configuration")
        recorder.offer(MediaPacket(kind: .video, data: [1], dts: 0, pts: 0, importance: .key))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)).count, bytes.count, "nothing written after the end")
    }
}
