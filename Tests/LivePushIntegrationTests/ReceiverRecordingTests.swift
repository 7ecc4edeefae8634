import Foundation
import LivePush
import LivePushLoopback
import XCTest

/// Two publishes of one stream name that overlap (a stale connection still draining while its
/// reconnected successor records): each keeps a whole recording of its own.
final class ReceiverRecordingTests: XCTestCase {
    func testAnOlderPublishEndingLateDoesNotOverwriteTheNewerRecording() async throws {
        let dir = try TestMedia.makeTemporaryDirectory(prefix: "receiver-overlap")
        defer { TestMedia.removeTemporaryDirectory(dir) }
        let receiver = RTMPReceiver(configuration: .init(recordDirectory: dir.path))
        let port = try receiver.start()
        defer { receiver.stop() }
        let url = "rtmp://127.0.0.1:\(port)/live/overlap"
        let ended = receiver.makeEventStream()

        // The older publish: real time, 4 s.
        var slow = PushConfig()
        slow.statsInterval = .zero
        let older = LivePusher(config: slow)
        let olderEvents = older.events()
        try older.start(file: TestMedia.path(.h264AAC), url: url)
        _ = try await PushHelpers.awaitEvent(olderEvents) { $0 == .firstFramePushed }
        // The newer one starts while the older records, and ends first.
        let newer = try await PushHelpers.push(file: TestMedia.path(.bFrames), url: url)
        XCTAssertNil(newer.error)
        _ = try await PushHelpers.collect(older, olderEvents, start: .now, timeout: .seconds(20))

        var summaries: [PublishSummary] = []
        for await event in ended {
            if case .publishEnded(let summary) = event { summaries.append(summary) }
            if summaries.count == 2 { break }
        }
        summaries.sort { $0.publishID < $1.publishID }
        let (olderSummary, newerSummary) = (summaries[0], summaries[1])
        XCTAssertEqual(newerSummary.recordingPath, dir.appendingPathComponent("overlap.flv").path, "the newest keeps the name")
        XCTAssertEqual(olderSummary.recordingPath, dir.appendingPathComponent("overlap-\(olderSummary.publishID).flv").path)
        for summary in [olderSummary, newerSummary] {
            let probe = try FFProbe.run(try XCTUnwrap(summary.recordingPath))
            probe.assertWellFormed()
            XCTAssertEqual(probe.videoPackets.count, 100, "a whole recording: \(summary.recordingPath ?? "")")
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains(".part-") }
        XCTAssertEqual(leftovers, [], "no partial files left")
    }
}
