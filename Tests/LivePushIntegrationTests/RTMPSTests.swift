import Foundation
import LivePush
import XCTest

/// rtmps://: the push goes through TLS (nginx's stream module terminates it, as a CDN edge
/// does) to nginx-rtmp, which records what arrived. Each test makes its own CA with openssl;
/// the server's certificate is signed by it, so only a pusher that trusts that CA (or does
/// not verify) gets through.
final class RTMPSTests: XCTestCase {
    private var server: NginxRTMPServer?
    private var authority: TestCertificateAuthority?

    override func setUpWithError() throws {
        try XCTSkipUnless(NginxRTMPServer.isAvailable && Self.streamModuleInstalled, "nginx, rtmp and stream modules needed")
        authority = try TestCertificateAuthority()
    }

    override func tearDown() {
        server?.stop()
        server = nil
        authority?.remove()
        authority = nil
    }

    private static var streamModuleInstalled: Bool {
        FileManager.default.fileExists(atPath: "/usr/lib/nginx/modules/ngx_stream_module.so")
    }

    /// Starts nginx with a TLS port whose certificate this test's CA signed for `names`.
    private func startServer(names: [String] = TestCertificateAuthority.loopbackNames, expired: Bool = false) throws -> NginxRTMPServer {
        let authority = try XCTUnwrap(authority)
        let server = try NginxRTMPServer(tlsCertificate: authority.issue(names: names, expired: expired))
        self.server = server
        return server
    }

    private func config(caFile: String? = nil, verifyServer: Bool = true) -> PushConfig {
        var config = PushHelpers.fastConfig()
        config.tls = TLSOptions(caFile: caFile, verifyServer: verifyServer)
        return config
    }

    private var caFile: String { authority?.certificatePath ?? "" }

    private func assertPushedWhole(_ server: NginxRTMPServer, stream: String, line: UInt = #line) async throws {
        let probe = try FFProbe.run(try await server.awaitRecording(stream: stream))
        probe.assertWellFormed(line: line)
        XCTAssertEqual(probe.videoPackets.count, 100, line: line)
        XCTAssertEqual(probe.audioPackets.count, 174, line: line)
    }

    /// nginx-rtmp logs every connect and publish; a refused push must have reached neither.
    /// The refusal happened before any RTMP byte was sent, so nothing can still be on its way.
    private func assertNothingPublished(_ server: NginxRTMPServer, stream: String, line: UInt = #line) {
        let log = server.errorLog
        XCTAssertFalse(log.contains("connect: app="), log, line: line)
        XCTAssertFalse(log.contains("publish: name="), log, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: server.recordingPath(stream: stream)), line: line)
    }

    private func assertRefused(_ run: PushRun, detail: String, line: UInt = #line) {
        XCTAssertEqual(run.error?.code, .tlsVerificationFailed, String(describing: run.error), line: line)
        XCTAssertEqual(run.error?.detail, detail, line: line)
        XCTAssertEqual(run.eventNames.first, "connectFailed", line: line)
        XCTAssertEqual(run.eventNames.last, "stopped", line: line)
    }

    // MARK: - The library

    func testWithoutTheCAThePushIsRefusedBeforeAnyRTMP() async throws {
        let server = try startServer()
        let key = "4102444800-0-0-0123456789abcdef0123456789abcdef"  // expires in 2100
        let url = try XCTUnwrap(server.tlsURL(stream: "refused")) + "?auth_key=\(key)"
        let run = try await PushHelpers.push(file: TestMedia.path(.h264AAC), url: url, config: config())
        assertRefused(run, detail: "127.0.0.1:\(server.tlsPort ?? 0): certificate signed by an unknown issuer")
        XCTAssertFalse(String(describing: run.events).contains("0123456789abcdef"), "the key is never reported")
        assertNothingPublished(server, stream: "refused")
    }

    func testWithTheCAFileThePushArrivesWhole() async throws {
        let server = try startServer()
        let url = try XCTUnwrap(server.tlsURL(stream: "trusted"))
        let run = try await PushHelpers.push(file: TestMedia.path(.h264AAC), url: url, config: config(caFile: caFile))
        XCTAssertNil(run.error)
        XCTAssertEqual(run.eventNames, ["pushStarted", "firstFramePushed", "stopped"])
        try await assertPushedWhole(server, stream: "trusted")
    }

    func testACertificateForAnotherHostIsRefused() async throws {
        let server = try startServer(names: ["DNS:other.invalid"])
        // By address (checked against IP entries, no SNI) and by name (DNS entries, SNI).
        for host in ["127.0.0.1", "localhost"] {
            let url = try XCTUnwrap(server.tlsURL(host: host, stream: "mismatch"))
            let run = try await PushHelpers.push(file: TestMedia.path(.h264AAC), url: url, config: config(caFile: caFile))
            assertRefused(run, detail: "\(host):\(server.tlsPort ?? 0): certificate does not name \(host)")
        }
        assertNothingPublished(server, stream: "mismatch")
    }

    func testAnExpiredCertificateIsRefused() async throws {
        let server = try startServer(expired: true)
        let url = try XCTUnwrap(server.tlsURL(stream: "expired"))
        let run = try await PushHelpers.push(file: TestMedia.path(.h264AAC), url: url, config: config(caFile: caFile))
        assertRefused(run, detail: "127.0.0.1:\(server.tlsPort ?? 0): certificate expired")
        assertNothingPublished(server, stream: "expired")
    }

    func testWithoutVerificationAnyCertificateIsAccepted() async throws {
        let server = try startServer(names: ["DNS:other.invalid"])
        let url = try XCTUnwrap(server.tlsURL(stream: "unverified"))
        let run = try await PushHelpers.push(file: TestMedia.path(.h264AAC), url: url, config: config(verifyServer: false))
        XCTAssertNil(run.error)
        try await assertPushedWhole(server, stream: "unverified")
    }

    func testPlainRTMPToTheTLSPortFails() async throws {
        let server = try startServer()
        // Proves the port really speaks TLS: an rtmp:// handshake is not answered as RTMP.
        let plain = try XCTUnwrap(server.tlsURL(stream: "plain")).replacingOccurrences(of: "rtmps://", with: "rtmp://")
        var config = PushHelpers.fastConfig()
        config.responseTimeout = .seconds(2)
        let run = try await PushHelpers.push(file: TestMedia.path(.h264AAC), url: plain, config: config, timeout: .seconds(20))
        XCTAssertEqual(run.error?.code, .handshakeFailed, String(describing: run.error))
    }

    func testRTMPSToAPlainRTMPPortFailsTheTLSHandshake() async throws {
        let server = try startServer()
        // A server that does not speak TLS is a handshake failure, not a certificate problem.
        var config = config(caFile: caFile)
        config.responseTimeout = .seconds(2)
        let run = try await PushHelpers.push(file: TestMedia.path(.h264AAC), url: "rtmps://127.0.0.1:\(server.port)/live/plain",
                                             config: config, timeout: .seconds(20))
        XCTAssertEqual(run.error?.code, .handshakeFailed, String(describing: run.error))
        XCTAssertTrue(run.error?.detail?.contains("TLS handshake") == true, String(describing: run.error))
    }

    // MARK: - The CLI

    /// The built `livepush`, its wait kept off the concurrency pool.
    private func livepush(_ arguments: [String]) async throws -> ProcessRunner.Result {
        try await ProcessRunner.runAsync(try XCTUnwrap(LivePushCLI.binary, "livepush not built"), arguments)
    }

    func testCLIVerifiesUnlessToldNotTo() async throws {
        let server = try startServer()
        let file = TestMedia.path(.h264AAC)

        // By name: the certificate's DNS entry, and SNI.
        let trusted = try await livepush(["push", file, try XCTUnwrap(server.tlsURL(host: "localhost", stream: "cli-ca")),
                                           "--fast", "--ca-file", caFile])
        XCTAssertEqual(trusted.exitCode, 0, trusted.summary)

        let refused = try await livepush(["push", file, try XCTUnwrap(server.tlsURL(stream: "cli-refused")), "--fast"])
        XCTAssertEqual(refused.exitCode, 1, refused.summary)
        XCTAssertTrue(refused.stderrString.contains("805439760 [0x30020910] tlsVerificationFailed"), refused.stderrString)
        XCTAssertTrue(refused.stderrString.contains("certificate signed by an unknown issuer"), refused.stderrString)

        let insecure = try await livepush(["push", file, try XCTUnwrap(server.tlsURL(stream: "cli-insecure")), "--fast", "--insecure"])
        XCTAssertEqual(insecure.exitCode, 0, insecure.summary)
        XCTAssertTrue(insecure.stderrString.contains("warning: --insecure: the server's certificate is not verified"),
                      insecure.stderrString)

        try await assertPushedWhole(server, stream: "cli-ca")
        try await assertPushedWhole(server, stream: "cli-insecure")
        XCTAssertFalse(FileManager.default.fileExists(atPath: server.recordingPath(stream: "cli-refused")))
    }

    func testCLIRejectsAMissingCAFileAsBadUsage() throws {
        let missing = try XCTUnwrap(authority).directory.appendingPathComponent("missing.pem").path
        let result = try LivePushCLI.run(["push", TestMedia.path(.h264AAC), "rtmps://127.0.0.1/live/s", "--ca-file", missing])
        XCTAssertEqual(result.exitCode, 64, result.summary)
        XCTAssertTrue(result.stderrString.contains("--ca-file \(missing): no readable file there"), result.stderrString)

        let both = try LivePushCLI.run(["push", TestMedia.path(.h264AAC), "rtmps://127.0.0.1/live/s",
                                        "--ca-file", caFile, "--insecure"])
        XCTAssertEqual(both.exitCode, 64, both.summary)
    }
}
