import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import XCTest

/// `livepush channels` against callers of its control API who hold the token but not the
/// operator's trust: slow inputs that must not stall the API, and inputs that would make the
/// server a proxy into its network or open ports for anyone. Real sockets, the real binary.
final class ChannelsAPIHostileCallerTests: XCTestCase {
    private let token = "s3cret-token"
    private var dir: URL!
    /// Where outputs go: nothing listens there (the channels retry; what matters is their input).
    private let nowhere = "rtmp://127.0.0.1:1/live/x"

    override func setUpWithError() throws {
        dir = try TestMedia.makeTemporaryDirectory(prefix: "channels-hostile")
    }

    override func tearDown() {
        TestMedia.removeTemporaryDirectory(dir)
    }

    /// An API answer, and how long it took.
    private struct Answer: Sendable {
        var status: Int
        var text: String
        var seconds: Double
        var json: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] }
    }

    private func request(_ url: String, method: String = "GET", body: String? = nil) async throws -> Answer {
        try await Self.send(url, method: method, body: body, token: token)
    }

    private static func send(_ url: String, method: String = "GET", body: String? = nil, token: String) async throws -> Answer {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.timeoutInterval = 60
        request.httpBody = body.map { Data($0.utf8) }
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let began = ContinuousClock.now
        let (data, response) = try await URLSession.shared.data(for: request)
        let took = ContinuousClock.now - began
        return Answer(status: (response as? HTTPURLResponse)?.statusCode ?? 0, text: String(decoding: data, as: UTF8.self),
                      seconds: Double(took.components.attoseconds) / 1e18 + Double(took.components.seconds))
    }

    /// Runs `livepush channels` on `config` (JSON); returns it and its API's base URL.
    private func channels(_ config: String) async throws -> (RunningCLI, String) {
        let path = dir.appendingPathComponent("channels.json").path
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        let cli = try RunningCLI(["channels", path, "--log-format", "json"])
        let listening = await cli.awaitLine { $0.contains("controlListening") }
        let line = try XCTUnwrap(listening, "the API never said where it listens: \(cli.output)")
        let base = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["url"] as? String)
        return (cli, base)
    }

    private func code(_ answer: Answer) -> Int? { (answer.json?["error"] as? [String: Any])?["code"] as? Int }

    /// A UDP port nothing uses now (bound, read and released).
    private func freeUDPPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                guard bind(fd, raw, length) == 0, getsockname(fd, raw, &length) == 0 else { throw POSIXError(.EADDRINUSE) }
            }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// `GET /healthz` and `GET /metrics` in turn, every 50 ms for `span`: how long each took
    /// (infinity when not 200).
    private static func pollHealth(_ base: String, token: String, for span: Duration) async -> [Double] {
        var latencies: [Double] = []
        let end = ContinuousClock.now + span
        while ContinuousClock.now < end {
            do {
                let health = try await send(base + (latencies.count % 2 == 0 ? "/healthz" : "/metrics"), token: token)
                latencies.append(health.status == 200 ? health.seconds : .infinity)
            } catch {
                latencies.append(.infinity)
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return latencies
    }

    func testSlowProbesNeitherDelayTheirAddsNorTheHealthCheck() async throws {
        let started = try await channels("""
        {"control": "127.0.0.1:0", "token": "\(token)", "apiInputs": {"allow": [{"scheme": "udp", "host": "127.0.0.1"}]}, "channels": []}
        """)
        let cli = started.0
        let base: String = started.1
        // Probed all the time the adds and their probes run: every answer within 0.5 s.
        let bearer: String = token
        let sink: String = nowhere
        // Beyond the probes' 15 s.
        async let polled = Self.pollHealth(base, token: bearer, for: .seconds(18))
        let ports = try (0..<3).map { _ in try freeUDPPort() }
        // Three silent feeds, each probed for up to 15 s: the adds answer at once, side by side.
        let adds = try await withThrowingTaskGroup(of: (Int, Answer).self) { group in
            for (index, port) in ports.enumerated() {
                group.addTask {
                    let body = #"{"id": "u\#(index)", "input": "udp://127.0.0.1:\#(port)", "inputTimeout": 15, "outputs": ["\#(sink)"]}"#
                    return (index, try await Self.send(base + "/channels", method: "POST", body: body, token: bearer))
                }
            }
            return try await group.reduce(into: [Int: Answer]()) { $0[$1.0] = $1.1 }
        }
        for index in 0..<3 {
            let add = try XCTUnwrap(adds[index])
            XCTAssertEqual(add.status, 202, add.text)
            XCTAssertLessThan(add.seconds, 2, "the add answers before its probe ends")
            XCTAssertEqual(add.json?["state"] as? String, "starting", add.text)
        }
        print("channels adds answered in \(adds.values.map { String(format: "%.3f s", $0.seconds) }.sorted())")
        for index in 0..<3 {
            let one = try await request(base + "/channels/u\(index)")
            XCTAssertEqual(one.json?["state"] as? String, "starting", "still probing: \(one.text)")
        }
        // The probes end (no media within 15 s): each channel reports it and goes on without its feed.
        let deadline = ContinuousClock.now + .seconds(40)
        var states: [String] = []
        while ContinuousClock.now < deadline {
            states = []
            for index in 0..<3 { states.append(try await request(base + "/channels/u\(index)").json?["state"] as? String ?? "?") }
            if !states.contains("starting") { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        let latencies = await polled
        XCTAssertFalse(states.contains("starting"), "the probes ended: \(states)")
        XCTAssertGreaterThan(latencies.count, 50, "polled all along")
        let slowest = latencies.max() ?? .infinity
        print("healthz/metrics: \(latencies.count) answers while probing, slowest \(String(format: "%.1f", slowest * 1000)) ms, median \(String(format: "%.1f", latencies.sorted()[latencies.count / 2] * 1000)) ms")
        XCTAssertLessThan(slowest, 0.5, "every health check and scrape answers within 0.5 s")
        let log = cli.standardError
        XCTAssertGreaterThanOrEqual(log.components(separatedBy: "inputRetry").count - 1, 3,
                                    "each channel's failed probe is an event: \(log.suffix(3000))")
        cli.interrupt()
        _ = await cli.awaitExit(timeout: .seconds(30))
    }

    func testInputsTheConfigurationDoesNotAllowAreRefusedAndNeverReached() async throws {
        let target = try RecordingHTTPServer()
        let redirector = try RecordingHTTPServer(redirectTo: target.url("stolen"))
        let udpPort = try freeUDPPort()
        let (cli, base) = try await channels("""
        {"control": "127.0.0.1:0", "token": "\(token)",
         "apiInputs": {"allow": [{"scheme": "http", "host": "127.0.0.1", "ports": "\(redirector.port)"},
                                 {"scheme": "udp", "host": "*"}, {"scheme": "srt", "host": "*"}]},
         "channels": []}
        """)
        // Not in the rules: refused before anything is opened; the target never hears of it.
        let refused = try await request(base + "/channels", method: "POST",
                                        body: #"{"id": "h", "input": "\#(target.url("x"))", "outputs": ["\#(nowhere)"]}"#)
        XCTAssertEqual(refused.status, 403, refused.text)
        XCTAssertEqual(code(refused), 805504520, refused.text)
        XCTAssertTrue(refused.text.contains(#"field \"input\""#), refused.text)
        // Listeners need the configuration's leave, whatever the rules.
        for input in ["udp://0.0.0.0:\(udpPort)", "udp://@:\(udpPort)", "srt://:\(udpPort)?mode=listener",
                      "udp://127.0.0.1:\(udpPort)?localaddr=0.0.0.0"] {
            let listener = try await request(base + "/channels", method: "POST",
                                             body: #"{"id": "l", "input": "\#(input)", "outputs": ["\#(nowhere)"]}"#)
            XCTAssertEqual(listener.status, 403, "\(input): \(listener.text)")
            XCTAssertEqual(code(listener), 805504520, listener.text)
        }
        let listed = try await request(base + "/channels")
        XCTAssertEqual((try? JSONSerialization.jsonObject(with: Data(listed.text.utf8)) as? [Any])?.count, 0,
                       "nothing refused was added: \(listed.text)")

        // Allowed, but it redirects elsewhere: the redirect is not followed.
        let redirected = try await request(base + "/channels", method: "POST",
                                           body: #"{"id": "r", "input": "\#(redirector.url("redir"))", "inputTimeout": 2, "outputs": ["\#(nowhere)"]}"#)
        XCTAssertEqual(redirected.status, 202, redirected.text)
        let deadline = ContinuousClock.now + .seconds(20)
        while redirector.requests.count < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
        XCTAssertGreaterThanOrEqual(redirector.requests.count, 2, "the allowed server is asked (and asked again)")
        try await Task.sleep(for: .seconds(2))
        XCTAssertEqual(target.requests, [], "the redirect's target sees no request")
        XCTAssertEqual(redirector.requests.filter { !$0.hasPrefix("GET /redir ") }, [], "only what was allowed is asked for")
        print("redirector asked \(redirector.requests.count) times; target \(target.requests.count)")
        cli.interrupt()
        _ = await cli.awaitExit(timeout: .seconds(30))
    }
}
