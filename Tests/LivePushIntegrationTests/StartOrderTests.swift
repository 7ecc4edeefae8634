import Foundation
import LivePush
import LivePushLoopback
import LivePushWire
import XCTest

/// The start of a push whose sound the push encodes (here: mixing on), from a file whose sound
/// starts 23 ms before its pictures (Matroska keeps the encoder's priming as that lead): the first media a
/// server gets is that sound, so nginx's recording keeps the 23 ms between them. (The AAC encoder hands out its first frame only
/// after its look-ahead, by when the first picture had gone: nginx then took the picture's
/// time as its zero, 2 runs in 20, and the receiver always got the picture first.)
final class StartOrderTests: NginxTestCase {
    private var directory: URL!
    private var file = ""

    override func setUp() async throws {
        try await super.setUp()
        directory = try TestMedia.makeTemporaryDirectory(prefix: "start-order")
        file = directory.appendingPathComponent("sound-first.mkv").path
        let made = try ProcessRunner.run("ffmpeg", [
            "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25:duration=1",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=1",
            "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-c:a", "aac", file])
        XCTAssertEqual(made.exitCode, 0)
    }

    override func tearDown() async throws {
        if let directory { TestMedia.removeTemporaryDirectory(directory) }
        try await super.tearDown()
    }

    private func mixingConfig(realTime: Bool = false) -> PushConfig {
        var config = PushHelpers.fastConfig()
        if realTime { config.pacing = .realTime }
        config.media.audioMixing = true
        return config
    }

    /// The pictures' start minus the sound's in the source, as ffprobe reads it (s).
    private func sourceLead() throws -> Double {
        let source = try FFProbe.run(file)
        return try XCTUnwrap(source.videoPackets.compactMap(\.ptsTime).min()) - XCTUnwrap(source.audioPackets.compactMap(\.ptsTime).min())
    }

    func testTheServerGetsTheFirstSoundBeforeTheFirstPicture() async throws {
        let receiver = RTMPReceiver(configuration: .init(recordDirectory: directory.path))
        let port = try receiver.start()
        defer { receiver.stop() }
        let ended = receiver.makeEventStream()
        let run = try await PushHelpers.push(file: file, url: "rtmp://127.0.0.1:\(port)/live/order", config: mixingConfig())
        XCTAssertNil(run.error)
        var recording: String?
        for await event in ended {
            if case .publishEnded(let summary) = event { recording = summary.recordingPath; break }
        }
        // The receiver records in arrival order.
        let tags = try FLVFileReader.tags(in: [UInt8](Data(contentsOf: URL(fileURLWithPath: try XCTUnwrap(recording)))))
        let media = tags.filter { ($0.type == .audio || $0.type == .video) && !$0.isSequenceHeader }
        XCTAssertEqual(media.first?.type, .audio, "the first media to arrive is the sound")
        XCTAssertEqual(media.first?.timestampMs, 0)
        let firstPicture = try XCTUnwrap(media.first { $0.type == .video })
        XCTAssertEqual(Double(firstPicture.timestampMs) / 1000, try sourceLead(), accuracy: 0.002)
    }

    func testNginxKeepsTheTimeBetweenTheFirstSoundAndTheFirstPicture() async throws {
        try await assertNginxKeepsTheLead(realTime: false, stream: "order")
    }

    func testNginxKeepsItInRealTimeToo() async throws {
        try await assertNginxKeepsTheLead(realTime: true, stream: "order-realtime")
    }

    private func assertNginxKeepsTheLead(realTime: Bool, stream: String) async throws {
        let run = try await PushHelpers.push(file: file, url: server.url(stream: stream), config: mixingConfig(realTime: realTime))
        XCTAssertNil(run.error)
        let recorded = try FFProbe.run(try await server.awaitRecording(stream: stream))
        recorded.assertWellFormed()
        let lead = try XCTUnwrap(recorded.videoPackets.compactMap(\.ptsTime).min()) - XCTUnwrap(recorded.audioPackets.compactMap(\.ptsTime).min())
        XCTAssertEqual(lead, try sourceLead(), accuracy: 0.002, "nginx rebased its recording on a picture that came first")
    }
}
