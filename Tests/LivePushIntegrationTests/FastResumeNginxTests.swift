import Foundation
import LivePush
import LivePushLoopback
import XCTest

/// A `--fast` push that loses its connection sends again what the server has not acknowledged.
/// The loopback's own model of this is checked in `FaultMatrixTests`; here the acknowledgements
/// come from a real nginx-rtmp, behind a relay that resets the client's side mid-stream.
///
/// What arrived is checked frame by frame (``LoopedFramesCoverage``): every frame of every pass,
/// not a count that the frames sent twice can make up for.
final class FastResumeNginxTests: XCTestCase {
    private var nginx: NginxRTMPServer?
    private var loopback: FaultLoopback?

    override func tearDown() {
        loopback?.stop()
        nginx?.stop()
    }

    /// Five pushes, each reset after 1 MB. The loss this once had (15 or 16 frames of 2,000, one
    /// run in seven under load) needed the producer to find room just before the reset and
    /// hand its packet over just after it: one push rarely shows it.
    func testNoFrameIsLostOnTheWayToNginxAcrossAReset() async throws {
        for push in 1...5 {
            let (run, frames, _) = try await pushTwentyPasses(across: "reset-after-bytes=1m@conn=1", stream: "resume\(push)")
            // The sample has 100 video frames: every frame of the 20 passes arrived, some twice.
            XCTAssertEqual(frames.missing.count, 0, "push \(push): \(frames.summary)")
            XCTAssertEqual(frames.problems, [], "push \(push): \(frames.summary)")
            XCTAssertEqual(frames.publishes.count, 2, "push \(push): \(frames.summary)")
            XCTAssertGreaterThanOrEqual(run.stats.videoFramesSent, frames.recorded)
        }
    }

    /// The path dies, but nginx still holds the old publish for a while: it refuses the
    /// reconnect ("Already publishing") until it lets go, and the client waits for it.
    func testNoFrameIsLostWhenNginxStillHoldsTheOldPublish() async throws {
        let (run, frames, refusals) = try await pushTwentyPasses(across: "stale=500ms@conn=1,messages=500", stream: "resume")
        XCTAssertGreaterThanOrEqual(refusals, 1, "nginx refused no reconnect: the case was not exercised")
        XCTAssertTrue(run.eventNames.contains("staleSession"), "\(run.eventNames)")
        XCTAssertEqual(frames.missing.count, 0, frames.summary)
        XCTAssertEqual(frames.problems, [], frames.summary)
        XCTAssertGreaterThanOrEqual(run.stats.videoFramesSent, frames.recorded)
    }

    /// Pushes 20 passes of the sample with `--fast` through a relay with `fault` (a new one per
    /// push, so that `conn=1` is this push's first connection), and finds which frames nginx
    /// recorded once every publish's recording is closed.
    private func pushTwentyPasses(across fault: String, stream: String) async throws
        -> (run: PushRun, frames: LoopedFramesCoverage, refusals: Int) {
        try XCTSkipUnless(NginxRTMPServer.isAvailable, "nginx + libnginx-mod-rtmp not installed")
        // Every publish of a stream goes into one recording, so the frames that arrived can be
        // found in it.
        let nginx = try self.nginx ?? NginxRTMPServer(recordAppend: true)
        self.nginx = nginx
        let refusedBefore = nginx.alreadyPublishingRefusals
        loopback?.stop()
        let loopback = FaultLoopback(configuration: .init(upstream: "127.0.0.1:\(nginx.port)", faults: [try FaultSpec.parse(fault)]))
        self.loopback = loopback
        let port = try loopback.start()

        var config = PushConfig()
        config.pacing = .asFastAsPossible
        config.looping = .times(20)
        config.socketSendBufferBytes = 32 * 1024
        config.connectRetryInterval = .milliseconds(100)
        let run = try await PushHelpers.push(file: TestMedia.path(.h264AAC),
                                             url: "rtmp://127.0.0.1:\(port)/\(NginxRTMPServer.application)/\(stream)",
                                             config: config, timeout: .seconds(60))
        XCTAssertNil(run.error)
        XCTAssertTrue(run.eventNames.contains("connectionLost"), "\(run.eventNames)")
        XCTAssertTrue(run.eventNames.contains("reconnectSucceeded"), "\(run.eventNames)")

        // Every publish leaves a closed-recording marker, the refused ones too: counting only
        // the publishes would take the marker of a refusal for the last publish's, and read
        // the recording before that publish's end was written.
        let publishes = 1 + run.eventNames.filter { $0 == "reconnectSucceeded" }.count
        let refusals = nginx.alreadyPublishingRefusals - refusedBefore
        try await waitUntil("nginx closed the recordings of \(publishes) publishes and \(refusals) refused ones") {
            nginx.closedRecordings(stream: stream) >= publishes + refusals
        }
        let frames = try LoopedFramesCoverage(source: TestMedia.path(.h264AAC), recording: nginx.recordingPath(stream: stream),
                                              passes: 20)
        return (run, frames, refusals)
    }
}
