import Foundation
import XCTest

/// The `livepush` CLI against WHIP endpoints of the test's own that answer what no endpoint
/// should: a `Link` to `stun:?` (which once trapped the next connect), and an https:// endpoint
/// whose session lives on http://. Plain HTTP endpoints on 127.0.0.1 (`ScriptedWHIPEndpoint`);
/// TLS through a terminator of the test's own with a certificate of its own CA.
final class WHIPHostileEndpointTests: XCTestCase {
    private static let token = "hostile-cli-token-7f3a"
    private static let answer = "v=0\r\no=- 2 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\n"

    private static func created(location: String, _ fields: [String] = []) -> String {
        "HTTP/1.1 201 Created\r\nContent-Type: application/sdp\r\nLocation: \(location)\r\n"
            + fields.map { "\($0)\r\n" }.joined() + "Content-Length: \(answer.utf8.count)\r\n\r\n" + answer
    }

    private static let ok = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"

    private func lines(of cli: RunningCLI) -> String { (cli.output + [cli.standardError]).joined(separator: "\n") }

    /// Every answer links `stun:?` or `turn:?`. The connect after the first (which reads those
    /// servers) once died of SIGILL; now the push keeps retrying, with coded errors, until
    /// stopped, and exits by itself on SIGINT.
    func testAnAnswerLinkingStunQuestionMarkDoesNotCrashThePusher() async throws {
        let endpoint = try ScriptedWHIPEndpoint { number, request in
            guard request.method == "POST" else { return Self.ok }
            let link = number.isMultiple(of: 2) ? "Link: <stun:?>; rel=\"ice-server\""
                : "Link: <turn:?>; rel=\"ice-server\"; username=\"u\"; credential=\"p\""
            return Self.created(location: "/whip/resource/\(number)", [link, "Link: <stun:>; rel=ice-server"])
        }
        defer { endpoint.stop() }
        let cli = try RunningCLI(["push", TestMedia.path(.h264AAC), endpoint.url("/whip/endpoint"), "--whip-token", Self.token,
                                  "--retry-count", "forever", "--retry-interval", "100", "--json"])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }

        // Three offers: the second and third connects are the ones that read the Link servers.
        let deadline = ContinuousClock.now + .seconds(90)
        while endpoint.requests.filter({ $0.method == "POST" }).count < 3, cli.isRunning, ContinuousClock.now < deadline {
            _ = await endpoint.awaitRequests(endpoint.requests.count + 1, timeout: .seconds(1))
        }
        XCTAssertTrue(cli.isRunning, "the pusher is still running after the Link answers: \(lines(of: cli))")
        XCTAssertGreaterThanOrEqual(endpoint.requests.filter { $0.method == "POST" }.count, 3, lines(of: cli))
        cli.interrupt()
        let exit = await cli.awaitExit(timeout: .seconds(30))
        let status = try XCTUnwrap(exit, "it stops on SIGINT")
        XCTAssertLessThan(status, 128, lines(of: cli))
        XCTAssertTrue(lines(of: cli).contains("whipServerError"), "each failed connect is a coded error: \(lines(of: cli))")
        XCTAssertEqual(Set(endpoint.requests.map { $0.value(of: "Authorization") }), ["Bearer \(Self.token)"],
                       "the endpoint's own origin gets the token on every request")
        XCTAssertFalse(lines(of: cli).contains(Self.token), "the token is never printed")
    }

    /// An https:// endpoint whose 201 names an http:// session: refused with a code, and the
    /// http:// server sees nothing (no DELETE, no token in the clear).
    func testAnHTTPSEndpointsHTTPSessionGetsNothingInTheClear() async throws {
        let cleartext = try ScriptedWHIPEndpoint { _, _ in Self.ok }
        defer { cleartext.stop() }
        let sessionURL = cleartext.url("/whip/resource/1")
        let behindTLS = try ScriptedWHIPEndpoint { _, request in
            request.method == "POST" ? Self.created(location: sessionURL) : Self.ok
        }
        defer { behindTLS.stop() }
        let authority = try TestCertificateAuthority()
        defer { authority.remove() }
        let certificate = try authority.issue()
        let python = try XCTUnwrap(ProcessRunner.which("python3"), "python3 is needed for the TLS terminator")
        let script = TestMedia.repositoryRoot.appendingPathComponent("Tests/LivePushIntegrationTests/Support/tls_terminator.py").path
        let terminator = try RunningCLI(executable: python, [script, "--port", "0", "--upstream", "\(behindTLS.port)",
                                                             "--cert", certificate.certificate, "--key", certificate.key])
        defer { if terminator.isRunning { kill(terminator.processIdentifier, SIGKILL) } }
        let started = await terminator.awaitLine(timeout: .seconds(20)) { $0.hasPrefix("LISTENING ") }
        let listening = try XCTUnwrap(started, "the TLS terminator did not start: \(terminator.standardError)")
        let port = try XCTUnwrap(Int(listening.dropFirst("LISTENING ".count)))

        let cli = try RunningCLI(["push", TestMedia.path(.h264AAC), "https://127.0.0.1:\(port)/whip/endpoint",
                                  "--whip-token", Self.token, "--ca-file", authority.certificatePath, "--retry-count", "0", "--json"])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let ended = await cli.awaitExit(timeout: .seconds(60))
        let exit = try XCTUnwrap(ended, "the push ends by itself")
        XCTAssertNotEqual(exit, 0)
        XCTAssertLessThan(exit, 128)
        let all = lines(of: cli)
        XCTAssertTrue(all.contains("whipServerError") && all.contains("from https:// to http://"), all)
        XCTAssertEqual(behindTLS.requests.map(\.method), ["POST"], "the offer went over TLS")
        XCTAssertEqual(behindTLS.requests.first?.value(of: "Authorization"), "Bearer \(Self.token)")
        cleartext.stop()
        XCTAssertEqual(cleartext.requests.count, 0, "nothing went to the http:// session")
        terminator.interrupt()
        _ = await terminator.awaitExit(timeout: .seconds(10))
    }
}
