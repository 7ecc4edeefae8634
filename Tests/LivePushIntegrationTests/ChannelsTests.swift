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

    /// A request as a client of the API makes it: a body goes as JSON unless `headers` say otherwise.
    private func request(_ url: String, method: String = "GET", body: String? = nil, token: String? = nil,
                         headers: [String: String] = [:]) async throws -> (status: Int, json: Any?, text: String) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.httpBody = body.map { Data($0.utf8) }
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, try? JSONSerialization.jsonObject(with: data),
                String(decoding: data, as: UTF8.self))
    }

    /// Polls a channel's `entry` (every 20 ms, bounded) until the entries seen end with `sequence`;
    /// every change it saw, in order.
    private static func entriesOnAir(_ url: String, token: String, until sequence: [String], timeout: Duration) async -> [String] {
        var request = URLRequest(url: URL(string: url)!)
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        var entries: [String] = []
        let deadline = ContinuousClock.now + timeout
        while !entries.reversed().starts(with: sequence.reversed()), ContinuousClock.now < deadline {
            if let data = try? await URLSession.shared.data(for: request).0,
               let entry = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["entry"] as? String,
               entry != entries.last {
                entries.append(entry)
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return entries
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
        // Looped, so that a slow machine cannot reach the schedule's end before the test is done with it.
        _ = try write(#"{"loop": "forever", "content": [{"id": "a", "source": "A.mp4", "in": 0, "out": 10}]}"#, to: "schedule.json")
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
        XCTAssertEqual(added.status, 202, added.text)
        let fPublishes = await awaitPublishing("f")
        XCTAssertTrue(fPublishes, "nginx records the added channel")
        let pPublishes = await awaitPublishing("p-b")
        XCTAssertTrue(pPublishes)

        // Schedule-now on the playout channel: Y plays at once on both of its outputs. The API
        // is watched from before the request, beside the checks that follow: Y is on air for a
        // second of media, and on a busy machine those checks (a Python parser) take longer.
        let channelURL = base + "/channels/p"
        let bearer = token
        let watched = Task { await ChannelsTests.entriesOnAir(channelURL, token: bearer, until: ["now", "a"], timeout: .seconds(40)) }
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
        // Each output's connection, as the push's own output says (one output or several).
        for (channel, output) in [("p", "0"), ("p", "1"), ("f", "0")] {
            XCTAssertEqual(parsed["livepush_output_connected", ["channel": channel, "output": output]], 1, "\(channel) \(output)")
            XCTAssertEqual(parsed["livepush_output_reconnects_total", ["channel": channel, "output": output]], 0, "\(channel) \(output)")
        }
        XCTAssertGreaterThan(parsed["livepush_process_threads", [:]] ?? 0, 0)
        // Pacing: counted per packet (the values depend on how busy the machine is; here only that they exist).
        XCTAssertNotNil(parsed["livepush_channel_late_packets_total", ["channel": "f", "later_than": "0.05"]], metrics.text)
        XCTAssertNotNil(parsed["livepush_channel_pacing_lateness_worst_seconds", ["channel": "f"]])
        XCTAssertNotNil(parsed["livepush_output_late_packets_total", ["channel": "f", "output": "0", "later_than": "0.1"]])
        XCTAssertNotNil(parsed["livepush_output_pacing_lateness_worst_seconds", ["channel": "p", "output": "1"]])
        XCTAssertFalse(metrics.text.contains(token))

        // Y played to its end (the channel is back on "a").
        let entries = await watched.value
        XCTAssertEqual(entries.suffix(2), ["now", "a"], "the API shows the entry on air\n\(cli.standardError)")

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

    /// SIGHUP reads the configuration again, as nginx does: a channel that is gone stops, a
    /// changed one restarts, a new one starts, and an unchanged one goes on untouched (one
    /// publish at nginx, never ended). A broken file changes nothing; `POST /reload` does the same.
    func testReloadChangesOnlyWhatChanged() async throws {
        try PlayoutClip.a.make(in: dir, seconds: 10)
        func channel(_ id: String, _ stream: String) -> String {
            #"{"id": "\#(id)", "input": "A.mp4", "loop": "forever", "outputs": ["\#(server.url(stream: stream))"]}"#
        }
        func config(_ channels: [String]) -> String {
            #"{"control": "127.0.0.1:0", "token": "\#(token)", "channels": [\#(channels.joined(separator: ", "))]}"#
        }
        let path = try write(config([channel("keep", "r-keep"), channel("gone", "r-gone"), channel("moved", "r-moved-1")]),
                             to: "reload.json")
        let cli = try RunningCLI(["channels", path, "--log-format", "json"])
        let listening = await cli.awaitLine { $0.contains("controlListening") }
        let line = try XCTUnwrap(listening, "the API never said where it listens: \(cli.output)")
        let base = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["url"] as? String)
        for stream in ["r-keep", "r-gone", "r-moved-1"] {
            let publishing = await awaitPublishing(stream)
            XCTAssertTrue(publishing, "\(stream) never published: \(cli.standardError)")
        }

        _ = try write(config([channel("keep", "r-keep"), channel("moved", "r-moved-2"), channel("new", "r-new")]), to: "reload.json")
        XCTAssertEqual(kill(cli.processIdentifier, SIGHUP), 0)
        _ = try await server.awaitRecording(stream: "r-gone")
        _ = try await server.awaitRecording(stream: "r-moved-1")
        for stream in ["r-moved-2", "r-new"] {
            let publishing = await awaitPublishing(stream)
            XCTAssertTrue(publishing, "\(stream) never published after the reload: \(cli.standardError)")
        }
        let listed = try await request(base + "/channels", token: token)
        XCTAssertEqual((listed.json as? [[String: Any]])?.compactMap { $0["id"] as? String }, ["keep", "moved", "new"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: server.recordingDoneMarkerPath(stream: "r-keep")),
                       "the unchanged channel's publish never ended")
        XCTAssertEqual(server.errorLog.components(separatedBy: "publish: name='r-keep'").count - 1, 1,
                       "one publish of the unchanged channel at nginx")
        XCTAssertTrue(cli.standardError.contains("configReloaded"), cli.standardError)

        // A broken file is refused whole, with its code; the channels go on.
        _ = try write("{\"channels\": [{\"id\": \"x\"}]}", to: "reload.json")
        XCTAssertEqual(kill(cli.processIdentifier, SIGHUP), 0)
        let deadline = ContinuousClock.now + .seconds(10)
        while !cli.standardError.contains("reloadRefused") && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        XCTAssertTrue(cli.standardError.contains("reloadRefused") && cli.standardError.contains("805504513"), cli.standardError)
        let refused = try await request(base + "/reload", method: "POST", token: token)
        XCTAssertEqual(refused.status, 400, refused.text)
        XCTAssertEqual(((refused.json as? [String: Any])?["error"] as? [String: Any])?["code"] as? Int, 805504513)
        let still = try await request(base + "/channels", token: token)
        XCTAssertEqual((still.json as? [[String: Any]])?.compactMap { $0["id"] as? String }, ["keep", "moved", "new"])

        // POST /reload: the same file again changes nothing; it needs the token like /channels.
        _ = try write(config([channel("keep", "r-keep"), channel("moved", "r-moved-2"), channel("new", "r-new")]), to: "reload.json")
        let anonymous = try await request(base + "/reload", method: "POST")
        XCTAssertEqual(anonymous.status, 401)
        let again = try await request(base + "/reload", method: "POST", token: token)
        XCTAssertEqual(again.status, 200, again.text)
        XCTAssertEqual((again.json as? [String: Any])?["unchanged"] as? [String], ["keep", "moved", "new"])
        XCTAssertEqual((again.json as? [String: Any])?["restarted"] as? [String], [])

        cli.interrupt()
        let exit = await cli.awaitExit(timeout: .seconds(30))
        XCTAssertEqual(exit, 0)
        _ = try await server.awaitRecording(stream: "r-keep")
    }

    func testHostileCallersAreRefusedAndTheProcessStaysUp() async throws {
        // Beyond loopback without a token: refused at start, with a code (an empty token is none).
        let open = try write(#"{"control": "0.0.0.0:0", "channels": []}"#, to: "open.json")
        for environment in [[:], ["LIVEPUSH_CONTROL_TOKEN": ""]] {
            let refused = try LivePushCLI.run(["channels", open], timeout: 30, environment: environment)
            XCTAssertEqual(refused.exitCode, 1, refused.summary)
            XCTAssertTrue(refused.stderrString.contains("805504516"), refused.stderrString)
        }

        try PlayoutClip.a.make(in: dir, seconds: 10)
        _ = try write(#"{"content": [{"id": "a", "source": "A.mp4", "in": 0, "out": 10}]}"#, to: "schedule.json")
        let outside = try TestMedia.makeTemporaryDirectory(prefix: "outside-root")
        defer { TestMedia.removeTemporaryDirectory(outside) }
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("zero.json").path, withDestinationPath: "/dev/zero")
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("out").path, withDestinationPath: outside.path)
        let config = try write("""
        {"control": "127.0.0.1:0", "token": "\(token)",
         "channels": [{"id": "p", "playout": "schedule.json", "outputs": ["\(server.url(stream: "hp"))"]},
                      {"id": "f", "input": "A.mp4", "loop": "forever", "record": "f.flv", "autostart": false,
                       "outputs": ["\(server.url(stream: "hf"))"]}]}
        """, to: "channels.json")
        let cli = try RunningCLI(["channels", config, "--log-format", "json"])
        let listening = await cli.awaitLine { $0.contains("controlListening") }
        let line = try XCTUnwrap(listening, "the API never said where it listens: \(cli.output)")
        let base = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["url"] as? String)
        let port = try XCTUnwrap(URL(string: base)?.port)
        func code(_ answer: (status: Int, json: Any?, text: String)) -> Int? {
            ((answer.json as? [String: Any])?["error"] as? [String: Any])?["code"] as? Int
        }

        // What a web page could send cross-site without a preflight: a text/plain body.
        let plain = try await request(base + "/channels/p/schedule-now", method: "POST", body: #"{"id": "x", "source": "A.mp4", "in": 0, "out": 1}"#,
                                      token: token, headers: ["Content-Type": "text/plain"])
        XCTAssertEqual(plain.status, 415, plain.text)
        XCTAssertEqual(code(plain), 805504518)
        // A foreign Origin, and a Host that is not the API's (DNS rebinding): 403, even with the token.
        for headers in [["Origin": "http://evil.example"], ["Origin": "http://127.0.0.1:\(port + 1)"], ["Host": "evil.example:\(port)"]] {
            let forbidden = try await request(base + "/channels/f/start", method: "POST", token: token, headers: headers)
            XCTAssertEqual(forbidden.status, 403, "\(headers): \(forbidden.text)")
            XCTAssertEqual(code(forbidden), 805504517)
        }
        let sameOrigin = try await request(base + "/channels", token: token, headers: ["Origin": "http://127.0.0.1:\(port)"])
        XCTAssertEqual(sameOrigin.status, 200, "the API's own origin is served")

        // Numbers no Int64 holds, in every reader: 400 naming the field.
        for (path, body, field) in [
            ("/channels/p/schedule-now", #"{"id": "x", "source": "A.mp4", "in": 0, "out": 1e300}"#, #"field \"out\""#),
            ("/channels/p/schedule-now", #"{"id": "x", "source": "A.mp4", "in": -1e300, "out": 1}"#, #"field \"in\""#),
            ("/channels/p/blackout", #"{"duration": 1e300}"#, "duration"),
            ("/channels", #"{"id": "n", "input": "A.mp4", "loop": 1e300, "outputs": ["rtmp://127.0.0.1/live/n"]}"#, #"field \"loop\""#),
        ] {
            let answer = try await request(base + path, method: "POST", body: body, token: token)
            XCTAssertEqual(answer.status, 400, "\(body): \(answer.text)")
            XCTAssertNotNil(code(answer), answer.text)
            XCTAssertTrue(answer.text.contains(field), "\(field): \(answer.text)")
        }

        // Paths: /dev/zero (directly and through a symlink in the root), files and recordings outside the root.
        for (body, field) in [
            (#"{"id": "z", "playout": "/dev/zero", "outputs": ["rtmp://127.0.0.1/live/z"]}"#, "playout"),
            (#"{"id": "z", "playout": "zero.json", "outputs": ["rtmp://127.0.0.1/live/z"]}"#, "playout"),
            (#"{"id": "z", "input": "/etc/hostname", "outputs": ["rtmp://127.0.0.1/live/z"]}"#, "input"),
            (#"{"id": "z", "input": "A.mp4", "record": "\#(outside.path)/evil.flv", "outputs": ["rtmp://127.0.0.1/live/z"]}"#, "record"),
            (#"{"id": "z", "input": "A.mp4", "record": "../evil.flv", "outputs": ["rtmp://127.0.0.1/live/z"]}"#, "record"),
            (#"{"id": "z", "input": "A.mp4", "record": "out/evil.flv", "outputs": ["rtmp://127.0.0.1/live/z"]}"#, "record"),
        ] {
            let answer = try await request(base + "/channels", method: "POST", body: body, token: token)
            XCTAssertEqual(answer.status, 400, "\(body): \(answer.text)")
            XCTAssertTrue(answer.text.contains(#"field \"\#(field)\""#), answer.text)
        }
        let clipOutside = try await request(base + "/channels/p/schedule-now", method: "POST",
                                            body: #"{"id": "x", "source": "/etc/hostname", "in": 0, "out": 1}"#, token: token)
        XCTAssertEqual(clipOutside.status, 400, clipOutside.text)
        XCTAssertEqual(code(clipOutside), 805504519)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: outside.path), [], "nothing written outside the root")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.deletingLastPathComponent().appendingPathComponent("evil.flv").path))

        // 20 concurrent starts of one channel: one publish; stop ends it.
        var start = URLRequest(url: try XCTUnwrap(URL(string: base + "/channels/f/start")))
        start.httpMethod = "POST"
        start.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let startRequest = start
        let starts = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 {
                group.addTask { ((try await URLSession.shared.data(for: startRequest)).1 as? HTTPURLResponse)?.statusCode ?? 0 }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        XCTAssertEqual(starts.filter { $0 == 202 }.count, 1, "\(starts)")
        XCTAssertEqual(starts.filter { $0 == 400 }.count, 19, "\(starts)")
        let publishing = await awaitPublishing("hf")
        XCTAssertTrue(publishing)
        let stopped = try await request(base + "/channels/f/stop", method: "POST", token: token)
        XCTAssertEqual(stopped.status, 202)
        _ = try await server.awaitRecording(stream: "hf")
        XCTAssertEqual(server.errorLog.components(separatedBy: "publish: name='hf'").count - 1, 1, "exactly one publish: \(server.errorLog)")
        XCTAssertEqual(server.alreadyPublishingRefusals, 0)

        // A restart records to a new file: the first recording is kept whole.
        let firstRecording = try Data(contentsOf: dir.appendingPathComponent("f.flv"))
        XCTAssertGreaterThan(firstRecording.count, 0)
        let restarted = try await request(base + "/channels/f/restart", method: "POST", token: token)
        XCTAssertEqual(restarted.status, 202, restarted.text)
        let deadline = ContinuousClock.now + .seconds(15)
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("f-1.flv").path), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("f-1.flv").path), "the restart rotates the recording")
        XCTAssertEqual(try Data(contentsOf: dir.appendingPathComponent("f.flv")), firstRecording)

        let health = try await request(base + "/healthz")
        XCTAssertEqual(health.status, 200, "still serving")
        cli.interrupt()
        let exit = await cli.awaitExit(timeout: .seconds(30))
        XCTAssertEqual(exit, 0)
    }
}
