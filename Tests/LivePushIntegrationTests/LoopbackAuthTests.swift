import Foundation
import LivePush
import LivePushLoopback
import XCTest

/// The loopback checks auth_key like a CDN (same algorithm, shared key, clock skew) and the
/// pusher reports each rejection with its specific code.
final class LoopbackAuthTests: XCTestCase {
    private let key = "loopback-K3y"

    private func push(_ url: String, to loopback: FaultLoopback) async throws -> PushRun {
        try await PushHelpers.push(file: TestMedia.path(.audioOnly), url: url, timeout: .seconds(20))
    }

    private func start(skew: Duration = .zero) throws -> FaultLoopback {
        let loopback = FaultLoopback(configuration: .init(
            authentication: PublishAuthentication(privateKey: key, allowedSkew: skew)))
        _ = try loopback.start()
        return loopback
    }

    private func url(_ loopback: FaultLoopback, _ stream: String) -> String {
        "rtmp://127.0.0.1:\(loopback.port)/live/\(stream)"
    }

    func testValidKeyIsAccepted() async throws {
        let loopback = try start()
        defer { loopback.stop() }
        let signed = try AuthKeySigner(privateKey: key).sign(url(loopback, "ok"), validFor: .seconds(600))
        let run = try await push(signed, to: loopback)
        XCTAssertNil(run.error)
        let summary = try await loopback.waitForPublishEnd(stream: "ok", timeout: .seconds(10))
        XCTAssertEqual(summary.audioFrames, 174)
    }

    func testForgedKeyIsRejectedAsPublishRejected() async throws {
        let loopback = try start()
        defer { loopback.stop() }
        let forged = try AuthKeySigner(privateKey: "someone-else").sign(url(loopback, "forged"), validFor: .seconds(600))
        let run = try await push(forged, to: loopback)
        XCTAssertEqual(run.eventNames, ["connectFailed", "sdkError", "stopped"])
        XCTAssertEqual(run.error?.code, .publishRejected)
        XCTAssertTrue(run.error?.message.contains("BadAuth") ?? false, "\(String(describing: run.error))")
        XCTAssertTrue(loopback.summaries().isEmpty)
    }

    func testExpiredKeyIsRejectedAsAuthExpired() async throws {
        let loopback = try start()
        defer { loopback.stop() }
        let now = SystemWallClock().now
        let expired = try AuthKeySigner(privateKey: key).sign(url(loopback, "old"), expiresAt: now - 60)
        let run = try await push(expired, to: loopback)
        // The watcher asks for a new URL at once (it is past the lead time); none comes.
        XCTAssertEqual(run.eventNames, ["pushURLAuthenticationOverdue", "connectFailed", "sdkError", "stopped"])
        XCTAssertEqual(run.error?.code, .authExpired)
        let hash = try XCTUnwrap(AuthKeySigner.authKey(of: PushURL(expired))).hash
        XCTAssertFalse("\(run.events)".contains(hash), "no event carries the key's hash")
    }

    func testClockSkewIsTolerated() async throws {
        let loopback = try start(skew: .seconds(30))
        defer { loopback.stop() }
        let now = SystemWallClock().now
        let justExpired = try AuthKeySigner(privateKey: key).sign(url(loopback, "skew"), expiresAt: now - 5)
        let run = try await push(justExpired, to: loopback)
        XCTAssertNil(run.error, "5 s past expiry is within the 30 s skew")
    }
}
