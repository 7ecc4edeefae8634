import Foundation
import LivePush
import XCTest

/// A push whose signed URL expires mid-stream: the overdue callback supplies a new URL, a
/// forced reconnect uses it, and nginx (asking `auth_server.py` on every publish) accepts it.
/// Without a new URL the reconnect fails with `authExpired`, not a plain publish rejection.
final class AuthRefreshTests: XCTestCase {
    private let privateKey = "refresh-K3y"
    private var auth: AuthHTTPServer!
    private var nginx: NginxRTMPServer!

    override func setUpWithError() throws {
        try XCTSkipUnless(NginxRTMPServer.isAvailable, "nginx + libnginx-mod-rtmp not installed")
        try XCTSkipUnless(AuthHTTPServer.isAvailable, "python3 not installed")
        auth = try AuthHTTPServer(privateKey: privateKey)
        nginx = try NginxRTMPServer(onPublishURL: auth.publishURL)
    }

    override func tearDown() {
        nginx?.stop()
        auth?.stop()
    }

    /// Hands out a freshly signed URL when asked, like an app's backend would.
    final class Refresher: LivePusherNetworkDelegate, @unchecked Sendable {
        let url: String
        init(url: String) { self.url = url }
        func pusherPushURLAuthenticationOverdue(_ pusher: LivePusher) -> String? { url }
    }

    private func config(clock: ManualWallClock) -> PushConfig {
        var config = PushConfig()
        config.looping = .forever
        config.statsInterval = .milliseconds(100)
        config.connectRetryCount = 1
        config.connectRetryInterval = .milliseconds(100)
        config.wallClock = clock
        return config
    }

    func testOverdueCallbackRefreshesTheURLForTheNextConnect() async throws {
        let signer = AuthKeySigner(privateKey: privateKey)
        let realNow = SystemWallClock().now
        let clock = ManualWallClock(now: realNow)
        // Valid for the server for two minutes; the pusher's clock is moved to 70 s before expiry.
        let first = try signer.sign(nginx.url(stream: "refresh"), expiresAt: realNow + 120)
        let refreshed = try signer.sign(nginx.url(stream: "refresh"), expiresAt: realNow + 3600)
        let refresher = Refresher(url: refreshed)
        let pusher = LivePusher(config: config(clock: clock))
        pusher.networkDelegate = refresher
        let events = EventLog(pusher.events())
        try pusher.start(file: TestMedia.path(.h264AAC), url: first)
        defer { try? pusher.stop() }
        try await events.await("first frame") { $0.name == "firstFramePushed" }
        clock.set(realNow + 65)
        try await events.await("overdue") { $0.name == "pushURLAuthenticationOverdue" }
        // The delegate's answer is applied on the callback queue right after the event.
        try await events.await("1 s of media") { if case .stats(let s) = $0 { s.mediaTimeSent > 1_000_000 } else { false } }
        try pusher.reconnect()
        try await events.await("reconnectSucceeded") { $0.name == "reconnectSucceeded" }
        // nginx records each publish to the same file: wait for the first one's recording to
        // be closed, then for the second one's.
        _ = try await nginx.awaitRecording(stream: "refresh")
        try FileManager.default.removeItem(atPath: nginx.recordingDoneMarkerPath(stream: "refresh"))
        try await events.await("2 s of media") { if case .stats(let s) = $0 { s.mediaTimeSent > 2_000_000 } else { false } }
        try pusher.stop()
        try await events.await("stopped") { $0.name == "stopped" }

        let decisions = auth.decisions.filter { $0.contains("name=refresh ") }
        XCTAssertEqual(decisions.count, 2, auth.log)
        XCTAssertTrue(decisions.allSatisfy { $0.contains("-> 200") }, auth.log)
        let second = decisions.last ?? ""
        XCTAssertTrue(second.contains("-> 200 valid for 35") || second.contains("-> 200 valid for 36"),
                      "the second publish used the new URL: \(decisions)")
        let names = await events.names
        XCTAssertFalse(names.contains("sdkError"), "\(names)")
        let recording = try await nginx.awaitRecording(stream: "refresh")
        try FFProbe.run(recording).assertWellFormed()
    }

    func testExpiredURLWithoutRefreshFailsTheReconnectWithAuthExpired() async throws {
        let signer = AuthKeySigner(privateKey: privateKey)
        let realNow = SystemWallClock().now
        let clock = ManualWallClock(now: realNow)
        // Long enough for the first publish to be checked before it on a busy machine.
        let expiry = realNow + 6
        let url = try signer.sign(nginx.url(stream: "expires"), expiresAt: expiry)
        let pusher = LivePusher(config: config(clock: clock))
        let events = EventLog(pusher.events())
        try pusher.start(file: TestMedia.path(.h264AAC), url: url)
        defer { try? pusher.stop() }
        try await events.await("first frame") { $0.name == "firstFramePushed" }
        // The server checks with the real clock: wait until it has passed the expiry.
        while SystemWallClock().now <= expiry + 1 { try await Task.sleep(for: .milliseconds(100)) }
        clock.set(expiry + 1)
        try pusher.reconnect()
        try await events.await("reconnectFailed") { $0.name == "reconnectFailed" }
        try await events.await("sdkError") { $0.name == "sdkError" }
        let errors = await events.all.compactMap { if case .sdkError(let e) = $0 { e } else { nil } }
        XCTAssertEqual(errors.map(\.code), [.authExpired], "\(errors)")
        XCTAssertFalse(errors.description.contains(try XCTUnwrap(AuthKeySigner.authKey(of: PushURL(url))).hash), "the hash is not in the error")
        XCTAssertEqual(pusher.state, .reconnecting)
    }
}
