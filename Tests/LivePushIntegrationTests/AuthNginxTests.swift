import Foundation
import LivePush
import XCTest

/// Publishes to nginx-rtmp whose `on_publish` asks `auth_server.py` (hashlib MD5, the shared
/// key) whether the URL's auth_key is valid. URLs are signed with LivePush's `AuthKeySigner`;
/// the publisher is the `ffmpeg` CLI, and once LivePush's own pusher.
final class AuthNginxTests: XCTestCase {
    private let privateKey = "nginx-shared-K3y"
    private var auth: AuthHTTPServer!
    private var nginx: NginxRTMPServer!

    override func setUpWithError() throws {
        try XCTSkipUnless(NginxRTMPServer.isAvailable, "nginx + libnginx-mod-rtmp not installed")
        try XCTSkipUnless(AuthHTTPServer.isAvailable, "python3 not installed")
        try XCTSkipUnless(ProcessRunner.which("ffmpeg") != nil, "ffmpeg not installed")
        try start()
    }

    private func start(timestamp: String = "expiry", validity: Int = 0, skew: Int = 0) throws {
        tearDown()
        auth = try AuthHTTPServer(privateKey: privateKey, timestamp: timestamp, validity: validity, skew: skew)
        nginx = try NginxRTMPServer(onPublishURL: auth.publishURL)
    }

    override func tearDown() {
        nginx?.stop()
        auth?.stop()
        nginx = nil
        auth = nil
    }

    private var now: Int64 { SystemWallClock().now }

    /// One second of test pattern, H.264 in FLV, to `url`; bounded to 30 s.
    private func ffmpegPublish(_ url: String) throws -> ProcessRunner.Result {
        try ProcessRunner.run("ffmpeg", [
            "-hide_banner", "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=d=1:s=320x240:r=25",
            "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-f", "flv", url,
        ], timeout: 30)
    }

    private func assertRejected(_ url: String, stream: String, reason: String,
                                file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try ffmpegPublish(url)
        XCTAssertFalse(result.succeeded, "ffmpeg should fail: \(result.summary)", file: file, line: line)
        XCTAssertFalse(result.timedOut, result.summary, file: file, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: nginx.recordingDoneMarkerPath(stream: stream)),
                       "nginx recorded a rejected publish", file: file, line: line)
        let decision = auth.decisions.last { $0.contains("name=\(stream) ") } ?? "no on_publish call for \(stream)"
        XCTAssertTrue(decision.contains("-> 403 \(reason)"), "\(decision)\n\(auth.log)", file: file, line: line)
    }

    func testValidAuthKeyIsRecorded() async throws {
        let signer = AuthKeySigner(privateKey: privateKey)
        let url = try signer.sign(nginx.url(stream: "valid") + "?vhost=example.com", validFor: .seconds(3600))
        let result = try ffmpegPublish(url)
        XCTAssertTrue(result.succeeded, result.summary)
        let recording = try await nginx.awaitRecording(stream: "valid")
        let probe = try FFProbe.run(recording)
        XCTAssertEqual(probe.videoStream?.codecName, "h264")
        XCTAssertEqual(probe.videoPackets.count, 25)
        XCTAssertEqual(auth.decisions.count, 1, auth.log)
        XCTAssertTrue(auth.decisions.first?.hasPrefix("publish app=live name=valid -> 200 valid") == true, auth.log)
    }

    func testExpiredAuthKeyIsRejected() throws {
        let signer = AuthKeySigner(privateKey: privateKey)
        let url = try signer.sign(nginx.url(stream: "expired"), expiresAt: now - 120)
        try assertRejected(url, stream: "expired", reason: "expired")
        XCTAssertEqual(signer.verify(try PushURL(url), now: now), .expired(at: try XCTUnwrap(AuthKeySigner.authKey(of: try PushURL(url))).timestamp))
    }

    func testForgedAuthKeysAreRejected() throws {
        let expiry = now + 3600
        // Signed with another key.
        let otherKey = try AuthKeySigner(privateKey: privateKey + "2").sign(nginx.url(stream: "forged"), expiresAt: expiry)
        try assertRejected(otherKey, stream: "forged", reason: "hash mismatch")
        // A genuine auth_key, for another stream.
        let genuine = try AuthKeySigner(privateKey: privateKey).sign(nginx.url(stream: "a"), expiresAt: expiry)
        let stolen = PushURLQuery.setting("auth_key", to: try XCTUnwrap(AuthKeySigner.authKey(of: try PushURL(genuine))).rawValue,
                                          inURL: nginx.url(stream: "b"))
        try assertRejected(stolen, stream: "b", reason: "hash mismatch")
        // No auth_key at all.
        try assertRejected(nginx.url(stream: "bare"), stream: "bare", reason: "missing")
    }

    func testIssuedAtReadingAndSkewAgreeWithTheServer() async throws {
        try start(timestamp: "issued", validity: 600, skew: 30)
        let signer = AuthKeySigner(privateKey: privateKey, timestampMeaning: .issuedAt(validity: .seconds(600)))
        // Issued 620 s ago: expired 20 s ago, within the 30 s skew.
        let late = try signer.sign(nginx.url(stream: "late"), expiresAt: now - 20)
        XCTAssertEqual(AuthKeySigner.authKey(of: try PushURL(late))?.timestamp, now - 620)
        XCTAssertTrue(signer.verify(try PushURL(late), now: now, allowedSkew: .seconds(30)).isValid)
        let accepted = try ffmpegPublish(late)
        XCTAssertTrue(accepted.succeeded, accepted.summary + auth.log)
        _ = try await nginx.awaitRecording(stream: "late")
        // Issued 700 s ago: expired 100 s ago.
        let stale = try signer.sign(nginx.url(stream: "stale"), expiresAt: now - 100)
        try assertRejected(stale, stream: "stale", reason: "expired")
    }

    func testLivePusherPublishesWithASignedURLAndIsRejectedWhenExpired() async throws {
        try XCTSkipUnless(TestMedia.exists(.h264AAC), "sample media missing")
        let signer = AuthKeySigner(privateKey: privateKey)
        let good = try signer.sign(nginx.url(stream: "pusher"), validFor: .seconds(600))
        let run = try await PushHelpers.push(file: TestMedia.path(.h264AAC), url: good)
        XCTAssertNil(run.error, "push failed: \(String(describing: run.error))\n\(auth.log)")
        _ = try await nginx.awaitRecording(stream: "pusher")

        let expired = try signer.sign(nginx.url(stream: "pusher-expired"), expiresAt: now - 60)
        let rejected = try await PushHelpers.push(file: TestMedia.path(.h264AAC), url: expired, timeout: .seconds(30))
        let error = try XCTUnwrap(rejected.error, "an expired URL was accepted: \(rejected.eventNames)")
        XCTAssertFalse("\(error)".contains(try XCTUnwrap(AuthKeySigner.authKey(of: try PushURL(expired))).hash),
                       "the error leaks the auth_key hash: \(error)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: nginx.recordingDoneMarkerPath(stream: "pusher-expired")))
    }
}

/// `livepush sign` and `livepush verify`, run as a user would. Skipped until both commands
/// are registered in `LivePushCommand`.
final class AuthCLITests: XCTestCase {
    private let key = "cli-k3y"
    private let t0: Int64 = 1_795_320_000  // 2026-11-22 04:00:00 UTC

    private func livepush(_ arguments: [String], environment: [String: String]? = nil) throws -> ProcessRunner.Result {
        try LivePushCLI.run(arguments, timeout: 30, environment: environment)
    }

    override func setUpWithError() throws {
        let binary = try XCTUnwrap(LivePushCLI.binary, "livepush executable not found next to the test bundle")
        for command in ["sign", "verify"] {
            let help = try ProcessRunner.run(binary, ["help", command], timeout: 30)
            try XCTSkipUnless(help.succeeded && help.stdoutString.contains("USAGE: livepush \(command)"),
                              "livepush \(command) is not registered in LivePushCommand yet")
        }
    }

    private func md5(_ text: String) throws -> String {
        let result = try ProcessRunner.run("python3", ["-c", "import hashlib,sys; print(hashlib.md5(sys.argv[1].encode()).hexdigest())", text])
        XCTAssertTrue(result.succeeded, result.summary)
        return result.stdoutString.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func testSignPrintsTheSignedURL() throws {
        let signed = try livepush(["sign", "rtmp://h/live/s?x=1", "--key", key, "--ttl", "3600", "--now", String(t0)])
        XCTAssertEqual(signed.exitCode, 0, signed.summary)
        let expiry = t0 + 3600
        XCTAssertEqual(signed.stdoutString, "rtmp://h/live/s?x=1&auth_key=\(expiry)-0-0-\(try md5("/live/s-\(expiry)-0-0-\(key)"))\n")

        let issued = try livepush(["sign", "rtmp://h/live/s", "--ttl", "600", "--timestamp", "issued", "--rand", "abc123",
                                   "--now", String(t0)], environment: ["LIVEPUSH_AUTH_KEY": key])
        XCTAssertEqual(issued.exitCode, 0, issued.summary)
        XCTAssertEqual(issued.stdoutString, "rtmp://h/live/s?auth_key=\(t0)-abc123-0-\(try md5("/live/s-\(t0)-abc123-0-\(key)"))\n")

        let random = try livepush(["sign", "rtmp://h/live/s", "--key", key, "--ttl", "60", "--rand", "uuid"])
        XCTAssertTrue(random.stdoutString.range(of: #"auth_key=\d+-[0-9a-f]{32}-0-[0-9a-f]{32}\n$"#, options: .regularExpression) != nil,
                      random.stdoutString)
    }

    func testSignUsageErrors() throws {
        XCTAssertEqual(try livepush(["sign", "rtmp://h/live/s", "--ttl", "60"], environment: [:]).exitCode, 64, "no key")
        XCTAssertEqual(try livepush(["sign", "rtmp://h/live/s", "--key", key, "--ttl", "0"]).exitCode, 64)
        let badURL = try livepush(["sign", "rtmp://h/live", "--key", key, "--ttl", "60"])
        XCTAssertEqual(badURL.exitCode, 1)
        XCTAssertTrue(badURL.stderrString.contains("invalidURL"), badURL.stderrString)
    }

    func testVerifyExplainsTheVerdict() throws {
        let signed = try livepush(["sign", "rtmp://h/live/s", "--key", key, "--ttl", "3600", "--now", String(t0)])
            .stdoutString.trimmingCharacters(in: .whitespacesAndNewlines)

        let valid = try livepush(["verify", signed, "--key", key, "--now", String(t0 + 1)])
        XCTAssertEqual(valid.exitCode, 0, valid.summary)
        XCTAssertEqual(valid.stdoutString, "valid: expires 2026-11-22 05:00:00 UTC (in 3599 s)\n")

        let expired = try livepush(["verify", signed, "--key", key, "--now", String(t0 + 3720)])
        XCTAssertEqual(expired.exitCode, 1)
        XCTAssertEqual(expired.stdoutString, "invalid: expired 120 s ago (at 2026-11-22 05:00:00 UTC)\n")

        let skewed = try livepush(["verify", signed, "--key", key, "--now", String(t0 + 3720), "--skew", "120"])
        XCTAssertEqual(skewed.exitCode, 0, skewed.summary)

        let forged = try livepush(["verify", signed, "--key", key + "x", "--now", String(t0)])
        XCTAssertEqual(forged.exitCode, 1)
        XCTAssertEqual(forged.stdoutString, "invalid: hash mismatch (signature computed with a different key or path)\n")
        XCTAssertFalse(forged.stdoutString.contains(key) || forged.stderrString.contains(key))

        let otherPath = try livepush(["verify", signed.replacingOccurrences(of: "/live/s?", with: "/live/t?"), "--key", key, "--now", String(t0)])
        XCTAssertEqual(otherPath.exitCode, 1)
        XCTAssertTrue(otherPath.stdoutString.contains("hash mismatch"), otherPath.stdoutString)

        let missing = try livepush(["verify", "rtmp://h/live/s", "--key", key])
        XCTAssertEqual(missing.exitCode, 1)
        XCTAssertEqual(missing.stdoutString, "invalid: the URL has no auth_key parameter\n")

        let issued = try livepush(["verify", signed, "--key", key, "--timestamp", "issued", "--validity", "60", "--now", String(t0 + 3650)])
        XCTAssertEqual(issued.stdoutString, "valid: expires 2026-11-22 05:01:00 UTC (in 10 s)\n")
        XCTAssertEqual(issued.exitCode, 0, issued.summary)
        XCTAssertEqual(try livepush(["verify", signed, "--key", key, "--timestamp", "issued"]).exitCode, 64, "--validity required")
    }
}
