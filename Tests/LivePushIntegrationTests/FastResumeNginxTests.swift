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
        try XCTSkipUnless(NginxRTMPServer.isAvailable, "nginx + libnginx-mod-rtmp not installed")
        // Both publishes go into one recording, so the frames that arrived can be counted in it.
        let nginx = try NginxRTMPServer(recordAppend: true)
        self.nginx = nginx
        let loopback = FaultLoopback(configuration: .init(upstream: "127.0.0.1:\(nginx.port)",
                                                          faults: [try FaultSpec.parse("reset-after-bytes=1m@conn=1")]))
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

        try await waitUntil("nginx closed both publishes' recordings") { nginx.closedRecordings(stream: "resume") >= 2 }
        let probe = try FFProbe.run(nginx.recordingPath(stream: "resume"))
        // The sample has 100 video frames: every frame of the 20 passes arrived, some twice.
        XCTAssertGreaterThanOrEqual(probe.videoPackets.count, 100 * 20)
        XCTAssertGreaterThanOrEqual(run.stats.videoFramesSent, probe.videoPackets.count)
    }
}
