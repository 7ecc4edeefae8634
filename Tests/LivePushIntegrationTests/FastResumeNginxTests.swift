import Foundation
import LivePush
import LivePushLoopback
import XCTest

/// A `--fast` push that loses its connection sends again what the server has not acknowledged.
/// The loopback's own model of this is checked in `FaultMatrixTests`; here the acknowledgements
/// come from a real nginx-rtmp, behind a relay that resets the client's side mid-stream.
final class FastResumeNginxTests: XCTestCase {
    private var nginx: NginxRTMPServer?
    private var loopback: FaultLoopback?

    override func tearDown() {
        loopback?.stop()
        nginx?.stop()
    }

    func testNoFrameIsLostOnTheWayToNginxAcrossAReset() async throws {
        let (run, frames, _) = try await pushTwentyPasses(across: "reset-after-bytes=1m@conn=1")
        // The sample has 100 video frames: every frame of the 20 passes arrived, some twice.
        XCTAssertGreaterThanOrEqual(frames, 100 * 20)
        XCTAssertGreaterThanOrEqual(run.stats.videoFramesSent, frames)
    }

    /// The path dies, but nginx still holds the old publish for a while: it refuses the
    /// reconnect ("Already publishing") until it lets go, and the client waits for it.
    func testNoFrameIsLostWhenNginxStillHoldsTheOldPublish() async throws {
        let (run, frames, refusals) = try await pushTwentyPasses(across: "stale=500ms@conn=1,messages=500")
        XCTAssertGreaterThanOrEqual(refusals, 1, "nginx refused no reconnect: the case was not exercised")
        XCTAssertTrue(run.eventNames.contains("staleSession"), "\(run.eventNames)")
        XCTAssertGreaterThanOrEqual(frames, 100 * 20)
        XCTAssertGreaterThanOrEqual(run.stats.videoFramesSent, frames)
    }

    /// Pushes 20 passes of the sample with `--fast` through the relay with `fault`, and counts
    /// the video frames in nginx's recording once every publish's recording is closed.
    private func pushTwentyPasses(across fault: String) async throws -> (run: PushRun, frames: Int, refusals: Int) {
        try XCTSkipUnless(NginxRTMPServer.isAvailable, "nginx + libnginx-mod-rtmp not installed")
        // Every publish goes into one recording, so the frames that arrived can be counted in it.
        let nginx = try NginxRTMPServer(recordAppend: true)
        self.nginx = nginx
        let loopback = FaultLoopback(configuration: .init(upstream: "127.0.0.1:\(nginx.port)", faults: [try FaultSpec.parse(fault)]))
        self.loopback = loopback
        let port = try loopback.start()

        var config = PushConfig()
        config.pacing = .asFastAsPossible
        config.looping = .times(20)
        config.socketSendBufferBytes = 32 * 1024
        config.connectRetryInterval = .milliseconds(100)
        let run = try await PushHelpers.push(file: TestMedia.path(.h264AAC),
                                             url: "rtmp://127.0.0.1:\(port)/\(NginxRTMPServer.application)/resume",
                                             config: config, timeout: .seconds(60))
        XCTAssertNil(run.error)
        XCTAssertTrue(run.eventNames.contains("connectionLost"), "\(run.eventNames)")
        XCTAssertTrue(run.eventNames.contains("reconnectSucceeded"), "\(run.eventNames)")

        // Every publish leaves a closed-recording marker, the refused ones too: counting only
        // the publishes would take the marker of a refusal for the last publish's, and read
        // the recording before that publish's end was written.
        let publishes = 1 + run.eventNames.filter { $0 == "reconnectSucceeded" }.count
        let refusals = nginx.alreadyPublishingRefusals
        try await waitUntil("nginx closed the recordings of \(publishes) publishes and \(refusals) refused ones") {
            nginx.closedRecordings(stream: "resume") >= publishes + refusals
        }
        let probe = try FFProbe.run(nginx.recordingPath(stream: "resume"))
        return (run, probe.videoPackets.count, refusals)
    }
}
