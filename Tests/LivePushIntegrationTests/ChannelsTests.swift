import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `livepush channels`: a configuration checked before anything starts, and the control API
/// driving channels against nginx (every effect seen by the server), with its metrics read by
/// a real Prometheus parser and its endpoints fed garbage.
final class ChannelsTests: NginxTestCase {
    private let token = "s3cret-token"

    private func write(_ text: String, to name: String) throws -> String {
        let path = dir.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private func request(_ url: String, method: String = "GET", body: String? = nil, token: String? = nil) async throws
        -> (status: Int, json: Any?, text: String) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.httpBody = body.map { Data($0.utf8) }
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, try? JSONSerialization.jsonObject(with: data),
                String(decoding: data, as: UTF8.self))
    }

    /// Waits (bounded) until nginx records `stream` and has more than `bytes` of it.
    private func awaitPublishing(_ stream: String, bytes: Int = 20_000, timeout: Duration = .seconds(20)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let size = (try? FileManager.default.attributesOfItem(atPath: server.recordingPath(stream: stream))[.size] as? Int) ?? 0
            if size > bytes { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    func testABadConfigurationIsRefusedBeforeAnythingStartsNamingTheChannelAndField() throws {
        let media = try PlayoutClip.a.make(in: dir, seconds: 1)
        let url = server.url(stream: "never")
        let cases: [(String, String)] = [
            (#"{"channels": [{"id": "c0", "input": "\#(media)", "outputs": ["\#(url)"]}, {"id": "c0", "input": "\#(media)", "outputs": ["\#(url)"]}]}"#,
             #"channel "c0", field "id""#),
            (#"{"channels": [{"id": "c1", "outputs": ["\#(url)"]}]}"#, #"channel "c1", field "input""#),
            (#"{"channels": [{"id": "c2", "input": "\#(media)", "outputs": ["http://example.com/x"]}]}"#, #"channel "c2", field "outputs[0]""#),
            (#"{"channels": [{"id": "c3", "input": "/nonexistent.mp4", "outputs": ["\#(url)"]}]}"#, #"channel "c3", field "input""#),
            (#"{"channels": [{"id": "c4", "input": "\#(media)", "outputs": ["\#(url)"], "volume": 3}]}"#, #"channel "c4", field "volume""#),
            (#"{"channels": [{"id": "c5", "input": "\#(media)", "outputs": ["\#(url)"], "loop": 0}]}"#, #"channel "c5", field "loop""#),
            (#"{"control": "nowhere", "channels": []}"#, #"field "control""#),
            ("not json", "not a JSON object"),
        ]
        for (config, expected) in cases {
            let result = try LivePushCLI.run(["channels", try write(config, to: "bad.json")], timeout: 30)
            XCTAssertEqual(result.exitCode, 1, config)
            XCTAssertTrue(result.stderrString.contains("805504513") && result.stderrString.contains(expected), "\(expected): \(result.stderrString)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: server.recordingPath(stream: "never")), "nothing was pushed")
    }

    func testTheControlAPIDrivesChannelsAgainstNginx() async throws {
        try PlayoutClip.a.make(in: dir, seconds: 10)
        try PlayoutClip.y.make(in: dir, seconds: 3)  // white: unmistakable at the channel's 1280x720
        _ = try write(#"{"content": [{"id": "a", "source": "A.mp4", "in": 0, "out": 10}]}"#, to: "schedule.json")
        let config = try write("""
        {"control": "127.0.0.1:0", "token": "\(token)",
         "channels": [{"id": "p", "playout": "schedule.json", "outputs": ["\(server.url(stream: "p-a"))", "\(server.url(stream: "p-b"))"]}]}
        """, to: "channels.json")
        let cli = try RunningCLI(["channels", config, "--log-format", "json"])
        let listening = await cli.awaitLine { $0.contains("controlListening") }
        let line = try XCTUnwrap(listening, "the API never said where it listens: \(cli.output)")
        let base = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["url"] as? String)

        // Without the token: 401, and nothing about the channels.
        let anonymous = try await request(base + "/channels")
        XCTAssertEqual(anonymous.status, 401)
        XCTAssertEqual(((anonymous.json as? [String: Any])?["error"] as? [String: Any])?["code"] as? Int, 805504515)
        XCTAssertFalse(anonymous.text.contains("p-a"))

        // Add a file channel: nginx sees it publish.
        let added = try await request(base + "/channels", method: "POST",
                                      body: #"{"id": "f", "input": "A.mp4", "loop": "forever", "outputs": ["\#(server.url(stream: "f"))"]}"#, token: token)
        XCTAssertEqual(added.status, 201, added.text)
        let fPublishes = await awaitPublishing("f")
        XCTAssertTrue(fPublishes, "nginx records the added channel")
        let pPublishes = await awaitPublishing("p-b")
        XCTAssertTrue(pPublishes)

        // Schedule-now on the playout channel: Y plays at once on both of its outputs.
        let now = try await request(base + "/channels/p/schedule-now", method: "POST",
                                    body: #"{"id": "now", "source": "Y.mp4", "in": 0, "out": 1}"#, token: token)
        XCTAssertEqual(now.status, 202, now.text)
        let notPlayout = try await request(base + "/channels/f/skip", method: "POST", token: token)
        XCTAssertEqual(notPlayout.status, 400)

        // The metrics, read by prometheus_client's parser: both channels pushing.
        let metrics = try await request(base + "/metrics")
        XCTAssertEqual(metrics.status, 200)
        let parsed = try PythonTools.prometheus(metrics.text)
        XCTAssertEqual(parsed["livepush_channel_state", ["channel": "p", "state": "pushing"]], 1, metrics.text)
        XCTAssertEqual(parsed["livepush_channel_state", ["channel": "f", "state": "pushing"]], 1)
        XCTAssertEqual(parsed["livepush_channels", ["state": "pushing"]], 2)
        XCTAssertGreaterThan(parsed["livepush_output_bytes_sent_total", ["channel": "p", "output": "1"]] ?? 0, 0)
        XCTAssertGreaterThan(parsed["livepush_process_threads", [:]] ?? 0, 0)
        // Pacing: counted per packet (the values depend on how busy the machine is; here only that they exist).
        XCTAssertNotNil(parsed["livepush_channel_late_packets_total", ["channel": "f", "later_than": "0.05"]], metrics.text)
        XCTAssertNotNil(parsed["livepush_channel_pacing_lateness_worst_seconds", ["channel": "f"]])
        XCTAssertNotNil(parsed["livepush_output_late_packets_total", ["channel": "f", "output": "0", "later_than": "0.1"]])
        XCTAssertNotNil(parsed["livepush_output_pacing_lateness_worst_seconds", ["channel": "p", "output": "1"]])
        XCTAssertFalse(metrics.text.contains(token))

        // Y played to its end (the channel is back on "a").
        var entries: [String] = []
        let deadline = ContinuousClock.now + .seconds(20)
        while entries.last != "a" || !entries.contains("now"), ContinuousClock.now < deadline {
            let channel = try await request(base + "/channels/p", token: token)
            if let entry = (channel.json as? [String: Any])?["entry"] as? String, entry != entries.last { entries.append(entry) }
            try await Task.sleep(for: .milliseconds(50))
        }
        XCTAssertEqual(entries.suffix(2), ["now", "a"], "the API shows the entry on air")

        // Remove the playout channel's second output: nginx sees that stream end, the first goes on.
        let removed = try await request(base + "/channels/p/outputs/1", method: "DELETE", token: token)
        XCTAssertEqual(removed.status, 202, removed.text)
        let pbEnded = try await server.awaitRecording(stream: "p-b")
        XCTAssertFalse(FileManager.default.fileExists(atPath: server.recordingDoneMarkerPath(stream: "p-a")), "p-a still publishes")
        // Its series went with it; the first output's remain.
        let afterRemoval = try PythonTools.prometheus(try await request(base + "/metrics").text)
        XCTAssertNil(afterRemoval["livepush_output_bytes_sent_total", ["channel": "p", "output": "1"]])
        XCTAssertNotNil(afterRemoval["livepush_output_bytes_sent_total", ["channel": "p", "output": "0"]])
        let missing = try await request(base + "/channels/p/outputs/5", method: "DELETE", token: token)
        XCTAssertEqual(missing.status, 404)

        // Stop the file channel: nginx sees it end; the API says stopped.
        let stopped = try await request(base + "/channels/f/stop", method: "POST", token: token)
        XCTAssertEqual(stopped.status, 202)
        _ = try await server.awaitRecording(stream: "f")
        let f = try await request(base + "/channels/f", token: token)
        XCTAssertEqual((f.json as? [String: Any])?["state"] as? String, "stopped")
        let unknown = try await request(base + "/channels/nope", token: token)
        XCTAssertEqual(unknown.status, 404)
        XCTAssertEqual(((unknown.json as? [String: Any])?["error"] as? [String: Any])?["code"] as? Int, 805504514)

        // What nginx recorded of p-b: A, then Y (the schedule-now) on the output that was removed later.
        let recording = try PlayoutRecording(path: pbEnded, frameRate: 25)
        XCTAssertEqual(recording.segments.prefix(2).map(\.name), ["A", "Y"], "\(recording.segments)\n\(cli.standardError)")

        // Garbage on every endpoint: a 4xx, never a crash.
        var generator = SystemRandomNumberGenerator()
        let paths = ["/channels", "/channels/p/schedule-now", "/channels/p/blackout", "/channels/p/outputs", "/channels/f/start",
                     "/channels/%00", "/channels/p/outputs/x"]
        for round in 0..<60 {
            let length = Int.random(in: 1..<200, using: &generator)  // an empty body is a valid blackout request
            var body = String((0..<length).map { _ in Character(UnicodeScalar(UInt8.random(in: 33...126, using: &generator))) })
            if round % 3 == 0 { body = #"{"id": \#(round), "url": [1, {"x": null}], "duration": "\#(body.prefix(5))"}"# }
            let path = paths[round % paths.count]
            let answer = try await request(base + path, method: round % 5 == 0 ? "DELETE" : "POST", body: body, token: token)
            XCTAssertTrue((400..<500).contains(answer.status), "\(path) <- \(body): \(answer.status) \(answer.text)")
        }
        let health = try await request(base + "/healthz")
        XCTAssertEqual(health.status, 200, "still serving after the garbage")
        cli.interrupt()
        let exit = await cli.awaitExit(timeout: .seconds(30))
        XCTAssertEqual(exit, 0)
        _ = try await server.awaitRecording(stream: "p-a")
    }
}
