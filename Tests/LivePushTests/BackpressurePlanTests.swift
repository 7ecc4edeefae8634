import XCTest
@testable import LivePush

final class BackpressurePlanTests: XCTestCase {
    private func room(full: Bool, connected: Bool) -> BackpressurePlan.Room {
        .init(isFull: full, isConnected: connected)
    }

    func testWithRoomEverywhereThePacketGoes() {
        let plan = BackpressurePlan(room: [room(full: false, connected: true), room(full: false, connected: false)])
        XCTAssertEqual(plan, BackpressurePlan(room: []))
        XCTAssertNil(plan.waitFor)
        XCTAssertEqual(plan.shed, [])
    }

    func testASingleOutputIsWaitedForConnectedOrNot() {
        for connected in [true, false] {
            let plan = BackpressurePlan(room: [room(full: true, connected: connected)])
            XCTAssertEqual(plan.waitFor, 0)
            XCTAssertEqual(plan.shed, [], "a single output never sheds: its resend would go")
        }
    }

    func testADisconnectedOutputShedsWhileAnotherCarriesThePush() {
        let plan = BackpressurePlan(room: [room(full: true, connected: false), room(full: false, connected: true)])
        XCTAssertNil(plan.waitFor)
        XCTAssertEqual(plan.shed, [0])
        let both = BackpressurePlan(room: [room(full: true, connected: false), room(full: true, connected: true)])
        XCTAssertEqual(both.waitFor, 1)
        XCTAssertEqual(both.shed, [0])
    }

    func testWhileNoneIsConnectedAllAreWaitedForAndNoneSheds() {
        let plan = BackpressurePlan(room: [room(full: false, connected: false), room(full: true, connected: false),
                                           room(full: true, connected: false)])
        XCTAssertEqual(plan.waitFor, 1)
        XCTAssertEqual(plan.shed, [])
    }

    /// The race behind the frames lost across a reset (issue 34): the producer finds room while
    /// its only output is connected; before it hands the packet over, the connection is lost
    /// and the resend history goes back into the queue, which fills it. The packet must be
    /// queued behind the resend, and nothing dropped: the output used to take "full and
    /// disconnected" for "not waited for" and drop its oldest GOPs, the resend among them.
    func testAPacketArrivingAfterTheLossDropsNothingOfTheResend() throws {
        var config = PushConfig()
        config.pacing = .asFastAsPossible
        let info = StreamInfo(video: VideoTrackInfo(width: 2, height: 2, frameRate: 25, bitrate: 0, decoderConfiguration: []),
                              audio: nil, duration: 0)
        let output = PushOutput(id: 0, config: config, url: try PushURL("rtmp://127.0.0.1/live/s"), info: info) { _ in }
        output.state.withLock { $0.connected = true }
        XCTAssertNil(BackpressurePlan(room: [output.room]).waitFor, "the producer found room")

        // The loss: disconnected, and four 1 s GOPs the server did not acknowledge put back.
        let resend = (0..<100).map { i in
            MediaPacket(kind: .video, data: [UInt8](repeating: 0, count: 1000), dts: Int64(i) * 40_000,
                        pts: Int64(i) * 40_000, importance: i % 25 == 0 ? .key : .reference)
        }
        output.state.withLock {
            $0.connected = false
            $0.queue.pushFront(resend)
        }
        output.push(MediaPacket(kind: .video, data: [UInt8](repeating: 0, count: 1000), dts: 4_000_000,
                                pts: 4_000_000, importance: .key))
        let queue = output.state.withLock { $0.queue }
        XCTAssertEqual(queue.count, 101)
        XCTAssertEqual(queue.drops.total, 0)
        XCTAssertEqual(queue.items.first?.dts, 0, "the resend still leads")
        // The producer then waits for it: it is the only output, and it is full.
        XCTAssertEqual(BackpressurePlan(room: [output.room]).waitFor, 0)
        XCTAssertEqual(BackpressurePlan(room: [output.room]).shed, [])
    }
}
