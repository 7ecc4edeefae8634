import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LivePushWire
import XCTest

/// The same paperwork for a blackout, and per channel in `livepush channels`.
final class ScheduleExportsBlackoutAndChannelsTests: NginxTestCase {
    private func request(_ url: String, method: String = "GET", body: String? = nil) async throws -> (status: Int, text: String) {
        try await ControlHTTP.text(url, method: method, body: body)
    }

    private static func url(of line: String?) throws -> String {
        let line = try XCTUnwrap(line, "the endpoint never said where it listens")
        return try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["url"] as? String)
    }

    func testABlackoutCutsTheEntryIntoThePartsThatAiredAsNginxRecordedThem() async throws {
        try PlayoutClip.a.make(in: dir, seconds: 5)
        let alternate = try PlayoutClip.y.make(in: dir, seconds: 3)
        let schedule = dir.appendingPathComponent("schedule.json").path
        try #"{ "content": [ {"id": "a", "source": "A.mp4", "in": 0, "out": 4, "title": "Match"} ] }"#
            .write(toFile: schedule, atomically: true, encoding: .utf8)
        let asRun = dir.appendingPathComponent("as-run.jsonl").path
        let cli = try RunningCLI(["playout", schedule, server.url(stream: "dark"), "--size", "320x240", "--json",
                                  "--control", "127.0.0.1:0", "--alternate", alternate, "--as-run", asRun])
        let base = try Self.url(of: await cli.awaitLine { $0.contains("controlListening") })
        let first = await cli.awaitLine { $0.contains("\"firstFramePushed\"") }
        XCTAssertNotNil(first)
        let on = try await request(base + "/blackout", method: "POST", body: #"{"duration": 1.5}"#)
        XCTAssertEqual(on.status, 202)
        let exit = await cli.awaitExit(timeout: .seconds(30))
        XCTAssertEqual(exit, 0, cli.output.suffix(5).joined(separator: "\n"))

        let logged = ScheduleExportsTests.lines(try String(contentsOfFile: asRun, encoding: .utf8))
        XCTAssertEqual(logged.compactMap { $0["kind"] as? String }, ["content", "alternate", "content"], "\(logged)")
        XCTAssertEqual(logged.compactMap { $0["ended"] as? String }, ["cutByBlackout", "completed", "completed"])
        XCTAssertEqual(logged.compactMap { $0["title"] as? String }, ["Match", "Blackout", "Match"])
        XCTAssertEqual(logged.count > 1 ? logged[1]["source"] as? String : nil, alternate)
        XCTAssertNotNil(logged.count > 1 ? logged[1]["eventId"] as? Int : nil, "the blackout's event id")
        let recording = try PlayoutRecording(path: try await server.awaitRecording(stream: "dark"), frameRate: 25)
        XCTAssertEqual(recording.segments.map(\.name), ["A", "Y", "A"], "\(recording.segments)")
        guard logged.count == 3, recording.segments.count == 3 else { return }
        let starts = try logged.map { try ScheduleExportsTests.seconds(iso: try XCTUnwrap($0["start"] as? String)) }
        let recorded = recording.starts
        for index in 0..<3 {
            let duration = try XCTUnwrap(logged[index]["duration"] as? Double)
            XCTAssertEqual(duration, Double(recording.segments[index].frames) / 25, accuracy: 0.08, "item \(index)'s duration")
            XCTAssertEqual(starts[index] - starts[0], recorded[index] - recorded[0], accuracy: 0.08, "item \(index)'s start")
        }
        XCTAssertEqual((logged[1]["duration"] as? Double) ?? 0, 1.5, accuracy: 0.08)
    }

    func testInFastModeTheIssuesScheduleIsLoggedInMediaTimeWithEachBreaksEventID() async throws {
        try PlayoutClip.a.make(in: dir, seconds: 10)
        try PlayoutClip.b.make(in: dir, seconds: 5)
        try PlayoutClip.x.make(in: dir, seconds: 3)
        try PlayoutClip.y.make(in: dir, seconds: 3)
        let schedule = dir.appendingPathComponent("schedule.json").path
        try PlayoutTests.example.write(toFile: schedule, atomically: true, encoding: .utf8)
        let asRun = dir.appendingPathComponent("as-run.jsonl").path
        let local = dir.appendingPathComponent("local.flv").path
        let result = try LivePushCLI.run(["playout", schedule, server.url(stream: "fast"), "--size", "320x240", "--fast",
                                          "--as-run", asRun, "--record", local], timeout: 120)
        XCTAssertEqual(result.exitCode, 0, result.summary)
        let logged = ScheduleExportsTests.lines(try String(contentsOfFile: asRun, encoding: .utf8))
        XCTAssertEqual(logged.compactMap { $0["id"] as? String }, ["x1", "a", "y1", "x2", "a", "b", "y2", "b", "a", "b", "y2", "b", "x3"])
        let recording = try PlayoutRecording(path: try await server.awaitRecording(stream: "fast"), frameRate: 25)
        XCTAssertEqual(recording.segments.count, 13, "\(recording.segments)")
        guard logged.count == 13, recording.segments.count == 13 else { return }
        let starts = try logged.map { try ScheduleExportsTests.seconds(iso: try XCTUnwrap($0["start"] as? String)) }
        for index in 0..<13 {
            let duration = try XCTUnwrap(logged[index]["duration"] as? Double)
            XCTAssertEqual(duration, Double(recording.segments[index].frames) / 25, accuracy: 0.08, "item \(index)'s duration")
            XCTAssertEqual(starts[index] - starts[0], recording.starts[index] - recording.starts[0], accuracy: 0.08, "item \(index)'s start")
        }
        // Each break's lines carry the id of the cue-out at its start; content carries none.
        let outs = try PlayoutTests.adCues(inFLV: local).compactMap { cue -> (time: Double, id: UInt32)? in
            guard case .insert(let insert) = cue.section.command, insert.outOfNetwork, abs(cue.tagTime - cue.time) < 0.1 else { return nil }
            return (cue.time, insert.eventID)
        }
        for (index, line) in logged.enumerated() {
            guard line["kind"] as? String != "content" else {
                XCTAssertNil(line["eventId"], "content line \(index)")
                continue
            }
            let breakStart = index > 0 && logged[index - 1]["kind"] as? String != "content" ? nil : recording.starts[index]
            if let breakStart {
                let id = outs.first { abs($0.time - breakStart) < 0.1 }?.id
                XCTAssertNotNil(id, "a cue-out at line \(index)'s start, \(breakStart) s: \(outs)")
                XCTAssertEqual(line["eventId"] as? Int, id.map(Int.init), "break at line \(index): \(outs)")
            } else {
                XCTAssertEqual(line["eventId"] as? Int, logged[index - 1]["eventId"] as? Int, "a pod is in its ad's break")
            }
        }
    }

    func testALiveEntryWhoseFeedDiesIsLoggedAsThePartThatAiredAndTheSlate() async throws {
        try PlayoutClip.a.make(in: dir, seconds: 2)
        try PlayoutClip.x.make(in: dir, seconds: 3)
        let feed = try RunningCLI(executable: "/usr/bin/ffmpeg", ["-v", "error", "-nostdin", "-re", "-stream_loop", "-1", "-i",
                                                                  dir.appendingPathComponent("X.mp4").path, "-c", "copy", "-f", "flv",
                                                                  server.url(stream: "feed")])
        defer { kill(feed.processIdentifier, SIGKILL) }
        let deadline = ContinuousClock.now + .seconds(15)
        while !server.errorLog.contains("publish: name='feed'") && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let schedule = dir.appendingPathComponent("schedule.json").path
        try """
        { "content": [ {"id": "a", "source": "A.mp4", "in": 0, "out": 1},
                       {"id": "live", "source": "\(server.url(stream: "feed"))", "in": 0, "out": 6, "title": "Live"} ] }
        """.write(toFile: schedule, atomically: true, encoding: .utf8)
        let asRun = dir.appendingPathComponent("as-run.jsonl").path
        let cli = try RunningCLI(["playout", schedule, server.url(stream: "drop"), "--size", "320x240", "--json", "--as-run", asRun])
        // The feed dies a second into the live entry: held on its last picture for the input
        // timeout (3 s), then the slate until the entry's 6 s are over.
        let live = await cli.awaitLine { $0.contains("\"entryStarted\"") && $0.contains(#""id":"live""#) }
        XCTAssertNotNil(live, "\(cli.output)")
        try await Task.sleep(for: .seconds(1))
        kill(feed.processIdentifier, SIGKILL)
        let exit = await cli.awaitExit(timeout: .seconds(40))
        XCTAssertEqual(exit, 0, cli.output.suffix(5).joined(separator: "\n"))

        let logged = ScheduleExportsTests.lines(try String(contentsOfFile: asRun, encoding: .utf8))
        XCTAssertEqual(logged.compactMap { $0["kind"] as? String }, ["content", "content", "slate"], "\(logged)")
        XCTAssertEqual(logged.compactMap { $0["ended"] as? String }, ["completed", "failed", "completed"])
        XCTAssertEqual(logged.compactMap { $0["id"] as? String }, ["a", "live", "live"])
        let recording = try PlayoutRecording(path: try await server.awaitRecording(stream: "drop"), frameRate: 25)
        XCTAssertEqual(recording.segments.map(\.name), ["A", "X", "slate"], "\(recording.segments)")
        guard logged.count == 3, recording.segments.count == 3 else { return }
        let starts = try logged.map { try ScheduleExportsTests.seconds(iso: try XCTUnwrap($0["start"] as? String)) }
        for index in 0..<3 {
            let duration = try XCTUnwrap(logged[index]["duration"] as? Double)
            XCTAssertEqual(duration, Double(recording.segments[index].frames) / 25, accuracy: 0.08, "item \(index)'s duration")
            XCTAssertEqual(starts[index] - starts[0], recording.starts[index] - recording.starts[0], accuracy: 0.08, "item \(index)'s start")
        }
    }

    func testAGuideOrLogThatCannotBeWrittenIsRefusedBeforeAnythingIsPushed() throws {
        try PlayoutClip.a.make(in: dir, seconds: 1)
        let schedule = dir.appendingPathComponent("schedule.json").path
        try #"{ "content": [ {"id": "a", "source": "A.mp4", "in": 0, "out": 1} ] }"#.write(toFile: schedule, atomically: true, encoding: .utf8)
        let nowhere = dir.appendingPathComponent("missing/dir").path
        for option in ["--epg", "--as-run"] {
            let result = try LivePushCLI.run(["playout", schedule, server.url(stream: "never"), option, nowhere + "/x"], timeout: 30)
            XCTAssertEqual(result.exitCode, 1, result.summary)
            XCTAssertTrue(result.stderrString.contains("805504005"), result.stderrString)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: server.recordingPath(stream: "never")), "nothing was pushed")
    }

    func testAPlayoutChannelKeepsItsGuideAndAsRunLogAndServesThem() async throws {
        try PlayoutClip.a.make(in: dir, seconds: 2)
        try PlayoutClip.b.make(in: dir, seconds: 2)
        try #"{ "content": [ {"id": "a", "source": "A.mp4", "in": 0, "out": 1, "title": "Opener"}, {"id": "b", "source": "B.mp4", "in": 0, "out": 2} ] }"#
            .write(toFile: dir.appendingPathComponent("schedule.json").path, atomically: true, encoding: .utf8)
        let config = dir.appendingPathComponent("channels.json").path
        try """
        {"control": "127.0.0.1:0",
         "channels": [{"id": "news", "playout": "schedule.json", "epg": "news.xml", "asRun": "news.jsonl",
                       "outputs": ["\(server.url(stream: "news"))"]}]}
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let refused = try LivePushCLI.run(["channels", try {
            let path = dir.appendingPathComponent("bad.json").path
            try #"{"channels": [{"id": "f", "input": "A.mp4", "epg": "f.xml", "outputs": ["rtmp://127.0.0.1/live/f"]}]}"#
                .write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }()], timeout: 30)
        XCTAssertEqual(refused.exitCode, 1)
        XCTAssertTrue(refused.stderrString.contains(#"channel "f", field "epg""#), refused.stderrString)

        let cli = try RunningCLI(["channels", config, "--log-format", "json"])
        let base = try Self.url(of: await cli.awaitLine { $0.contains("controlListening") })
        // The guide file is written when the channel starts; the first line once "a" has aired.
        let guidePath = dir.appendingPathComponent("news.xml").path
        let logPath = dir.appendingPathComponent("news.jsonl").path
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline,
              !((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "").contains(#""id":"a""#)
                || !FileManager.default.fileExists(atPath: guidePath) {
            try await Task.sleep(for: .milliseconds(50))
        }
        let onDisk = try String(contentsOfFile: guidePath, encoding: .utf8)
        let served = try await request(base + "/channels/news/epg.xml")
        XCTAssertEqual(served.status, 200)
        for xml in [onDisk, served.text] {
            let path = dir.appendingPathComponent("check.xml").path
            try xml.write(toFile: path, atomically: true, encoding: .utf8)
            let lint = try ProcessRunner.run("xmllint", ["--noout", "--dtdvalid", ScheduleExportsTests.dtd, path], timeout: 30)
            XCTAssertEqual(lint.exitCode, 0, lint.stderrString)
            XCTAssertEqual(try ScheduleExportsTests.programmes(xml).map(\.title), ["Opener", "B.mp4"])
            XCTAssertTrue(xml.contains(#"channel="news""#))
        }
        let asRun = try await request(base + "/channels/news/as-run")
        XCTAssertEqual(asRun.status, 200)
        let lines = ScheduleExportsTests.lines(asRun.text)
        XCTAssertEqual(lines.first?["id"] as? String, "a", asRun.text)
        XCTAssertEqual((lines.first?["duration"] as? Double) ?? 0, 1, accuracy: 0.08)
        XCTAssertEqual(lines.first?["title"] as? String, "Opener")
        let missing = try await request(base + "/channels/none/as-run")
        XCTAssertEqual(missing.status, 404)
        cli.interrupt()
        let exit = await cli.awaitExit(timeout: .seconds(30))
        XCTAssertNotNil(exit, "the channels process ended")
    }
}
