import Foundation
@testable import LivePush
import XCTest

/// An HLS output's writer on a real directory and the real worker pool: writes in order off the
/// caller's thread, a failed write held at the head until a connect writes it, the room it
/// reports, and the end (last segment, final playlist).
final class HLSWriterTests: XCTestCase {
    private var dir: URL!
    private var out: URL { dir.appendingPathComponent("out") }

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("hls-writer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: dir)
    }

    private func writer() -> HLSWriter {
        HLSWriter(store: HLSFileStore(directory: out.path), playlistName: "index.m3u8", options: HLSOptions(), forms: .all,
                  wallStart: 1_795_779_035_000_000)
    }

    /// Polls `condition` until it holds (true) or 10 s pass (false): an upper bound, not a measure.
    private func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            usleep(5_000)
        }
        return true
    }

    private func files() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: out.path)) ?? []).sorted()
    }

    func testAFailedWriteWaitsAtTheHeadUntilAConnectWritesIt() throws {
        let writer = writer()
        try writer.reopen()
        writer.enqueue([.put(name: "a.ts", bytes: [1, 2, 3])])
        XCTAssertTrue(eventually { writer.backlog == 0 })
        XCTAssertEqual(files(), ["a.ts"])

        try FileManager.default.removeItem(at: out)
        writer.enqueue([.put(name: "b.ts", bytes: [4]), .put(name: "index.m3u8", bytes: [5, 6])])
        var failure: LivePushError?
        XCTAssertTrue(eventually { failure = writer.takeFailure(); return failure != nil })
        XCTAssertEqual(failure?.code, .hlsWriteFailed)
        XCTAssertEqual(writer.backlog, 3, "both writes still queued")
        XCTAssertNil(writer.takeFailure(), "reported once")
        XCTAssertThrowsError(try writer.reopen(), "the directory is still gone") { error in
            XCTAssertEqual((error as? LivePushError)?.code, .hlsWriteFailed)
        }

        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        try writer.reopen()
        XCTAssertTrue(files().contains("b.ts"), "the failed write went first, on the connect's thread")
        XCTAssertTrue(eventually { writer.backlog == 0 })
        XCTAssertEqual(files(), ["b.ts", "index.m3u8"])
        XCTAssertEqual(writer.figures.puts, 3)
    }

    func testTheRoomIsTheQueuesAndAnEmptyQueueTakesAnything() {
        let writer = writer()
        XCTAssertTrue(writer.hasRoom(for: Int64(HLSWriter.maxQueuedBytes) * 2), "an empty queue takes a segment of any size")
        XCTAssertTrue(writer.hasRoom(for: 0))
    }

    func testTheEndWritesTheOpenSegmentAndTheFinalPlaylist() throws {
        let writer = writer()
        try writer.reopen()
        let avcC = WireTSMuxerPartsTests.avcC
        let info = StreamInfo(video: VideoTrackInfo(width: 320, height: 240, frameRate: 25, bitrate: 500_000, decoderConfiguration: avcC),
                              audio: nil, duration: 0)
        var stream = try writer.takeStream(for: info)
        let keyframe = WireTSMuxerPartsTests.avcc([[0x65, 0x88, 0x84]])
        for index in 0..<75 {
            let time = Int64(index) * 40_000
            writer.enqueue(stream.take(MediaPacket(kind: .video, data: keyframe, dts: time, pts: time, duration: 40_000,
                                                   importance: index % 25 == 0 ? .key : .reference)))
        }
        writer.park(stream)
        writer.finish(limit: .seconds(10))
        XCTAssertEqual(files(), ["index.m3u8", "index0.ts", "index1.ts"])
        let text = try String(contentsOf: out.appendingPathComponent("index.m3u8"), encoding: .utf8)
        XCTAssertTrue(text.hasSuffix("#EXTINF:1.000,\nindex1.ts\n#EXT-X-ENDLIST\n"), text)
        XCTAssertEqual(writer.figures.stream.segments, 2)
    }
}
