import XCTest
@testable import LivePush

/// The decisions of a server's reconnect request (Enhanced RTMP v2), and where its `tcUrl` may
/// send the stream key.
final class ServerReconnectStateMachineTests: XCTestCase {
    private let current = try! PushURL("rtmp://ingest.example.com:1935/live/sk_0123456789?auth_key=1-0-0-abc")

    private func request(_ tcUrl: String?) -> ServerReconnectRequest {
        ServerReconnectRequest(tcUrl: tcUrl, description: "maintenance")
    }

    func testTheWholeMoveRequestedConnectingPublishedSwitchedClosed() throws {
        var m = ServerReconnectStateMachine()
        let decision = m.requested(request("rtmp://ingest.example.com:1936/live2"), current: current, publishing: true)
        let target = try PushURL("rtmp://ingest.example.com:1936/live2/sk_0123456789?auth_key=1-0-0-abc")
        XCTAssertEqual(decision, .connect(target))
        XCTAssertEqual(m.phase, .connecting(target))
        // A second request while one runs is not followed.
        XCTAssertEqual(m.requested(request(nil), current: current, publishing: true), .ignore)
        XCTAssertEqual(m.newConnectionPublished(stillPublishing: true), .handOver)
        XCTAssertEqual(m.phase, .awaitingKeyframe(target))
        XCTAssertEqual(m.switched(), .closeOld(target))
        XCTAssertEqual(m.phase, .closingOld(target))
        m.oldClosed()
        XCTAssertTrue(m.isIdle)
    }

    func testWithoutATcUrlTheSameURLIsUsed() {
        var m = ServerReconnectStateMachine()
        XCTAssertEqual(m.requested(request(nil), current: current, publishing: true), .connect(current))
    }

    func testAFailedNewConnectionKeepsTheOldOneAndAnotherRequestMayFollow() {
        var m = ServerReconnectStateMachine()
        _ = m.requested(request(nil), current: current, publishing: true)
        let error = LivePushError(.publishRejected, "already publishing")
        XCTAssertEqual(m.newConnectionFailed(error), .abandon(error))
        XCTAssertTrue(m.isIdle)
        XCTAssertEqual(m.requested(request(nil), current: current, publishing: true), .connect(current))
    }

    func testTheOldConnectionLostBeforeTheSwitchClosesTheNewOne() {
        var m = ServerReconnectStateMachine()
        _ = m.requested(request(nil), current: current, publishing: true)
        // Lost while the new one connects: it is closed once it publishes.
        XCTAssertFalse(m.pumpEnded())
        XCTAssertEqual(m.newConnectionPublished(stillPublishing: false), .closeNew)
        XCTAssertTrue(m.isIdle)
        // Lost after the hand-over: the handed-over one goes with it.
        _ = m.requested(request(nil), current: current, publishing: true)
        XCTAssertEqual(m.newConnectionPublished(stillPublishing: true), .handOver)
        XCTAssertTrue(m.pumpEnded())
        XCTAssertTrue(m.isIdle)
        XCTAssertEqual(m.switched(), .ignore)
    }

    func testARequestWhileNotPublishingIsIgnored() {
        var m = ServerReconnectStateMachine()
        XCTAssertEqual(m.requested(request(nil), current: current, publishing: false), .ignore)
        XCTAssertTrue(m.isIdle)
    }

    func testRelativeTcUrlsResolveAgainstTheCurrentOne() throws {
        func resolved(_ tcUrl: String, from url: PushURL) -> String? {
            try? ServerReconnectTarget.resolve(request(tcUrl), current: url).get().rawValue
        }
        XCTAssertEqual(resolved("//ingest.example.com/live2", from: current), "rtmp://ingest.example.com/live2/sk_0123456789?auth_key=1-0-0-abc")
        XCTAssertEqual(resolved("/live2/", from: current), "rtmp://ingest.example.com:1935/live2/sk_0123456789?auth_key=1-0-0-abc")
        XCTAssertEqual(resolved("RTMP://INGEST.example.com/a/b", from: current), "RTMP://INGEST.example.com/a/b/sk_0123456789?auth_key=1-0-0-abc")
        let tls = try PushURL("rtmps://ingest.example.com/live/key")
        XCTAssertEqual(resolved("rtmps://ingest.example.com:8443/live", from: tls), "rtmps://ingest.example.com:8443/live/key")
        XCTAssertEqual(resolved("//ingest.example.com/live", from: tls), "rtmps://ingest.example.com/live/key")
    }

    func testHostileTcUrlsAreRefused() throws {
        func refusal(_ tcUrl: String, from url: PushURL? = nil) -> ServerReconnectTarget.Refusal? {
            if case .failure(let why) = ServerReconnectTarget.resolve(request(tcUrl), current: url ?? current) { return why }
            return nil
        }
        XCTAssertEqual(refusal("rtmp://evil.example.net/live"), .otherHost("evil.example.net"))
        XCTAssertEqual(refusal("//evil.example.net/live"), .otherHost("evil.example.net"))
        XCTAssertEqual(refusal("rtmp://ingest.example.com.evil.net/live"), .otherHost("ingest.example.com.evil.net"))
        XCTAssertEqual(refusal("http://ingest.example.com/live"), .scheme)
        XCTAssertEqual(refusal("srt://ingest.example.com:9000"), .malformed)
        XCTAssertEqual(refusal("rtmp://ingest.example.com/live", from: try PushURL("rtmps://ingest.example.com/live/key")), .downgrade)
        XCTAssertEqual(refusal("rtmp://user:pw@ingest.example.com/live"), .malformed)
        XCTAssertEqual(refusal("rtmp://ingest.example.com/live?x=1"), .malformed)
        XCTAssertEqual(refusal("rtmp://ingest.example.com/live\u{1b}[2J"), .malformed)
        XCTAssertEqual(refusal("rtmp://ingest.example.com/"), .malformed)
        XCTAssertEqual(refusal("live2"), .malformed)
        let long = "rtmp://ingest.example.com/" + String(repeating: "a", count: ServerReconnectRequest.maxTextLength)
        let tooLong = ServerReconnectRequest(tcUrl: long, description: nil)
        XCTAssertTrue(tooLong.tcUrlTooLong)
        var m = ServerReconnectStateMachine()
        XCTAssertEqual(m.requested(tooLong, current: current, publishing: true), .refuse(.tooLong))
        XCTAssertTrue(m.isIdle)
        // The refusal's sentence never carries the server's bytes raw.
        XCTAssertFalse(ServerReconnectTarget.Refusal.otherHost("a\u{1b}b").reason.contains("\u{1b}"))
    }

    func testOnlyALevelStatusReconnectCodeIsARequest() {
        XCTAssertNotNil(ServerReconnectRequest(name: "onStatus", level: "status", code: ServerReconnectRequest.code, tcUrl: nil, description: nil))
        XCTAssertNil(ServerReconnectRequest(name: "onStatus", level: "error", code: ServerReconnectRequest.code, tcUrl: nil, description: nil))
        XCTAssertNil(ServerReconnectRequest(name: "_result", level: "status", code: ServerReconnectRequest.code, tcUrl: nil, description: nil))
        XCTAssertNil(ServerReconnectRequest(name: "onStatus", level: "status", code: "NetStream.Publish.Start", tcUrl: nil, description: nil))
    }
}
