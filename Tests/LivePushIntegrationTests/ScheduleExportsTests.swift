import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(FoundationXML)
import FoundationXML
#endif
import LivePushWire
import XCTest

/// A playout channel's paperwork against real peers: its XMLTV guide checked by xmllint against
/// the XMLTV DTD, and its as-run log against what nginx recorded (cut back into entries by
/// colour and tone).
final class ScheduleExportsTests: NginxTestCase {
    static let dtd = "/usr/share/xmltv/xmltv.dtd"

    /// A titled schedule with a break: a (2 s), y1 + its pod x1 (1 s each), a (1 s), b (2 s).
    static let schedule = """
    { "content": [
        {"id": "a", "source": "A.mp4", "in": 0, "out": 3, "title": "Morning <News> & Co", "description": "Today's news",
         "category": "News", "episode": "S01E04"},
        {"id": "b", "source": "B.mp4", "in": 0, "out": 2} ],
      "ads": [
        {"id": "y1", "source": "Y.mp4", "type": "midroll", "at": 2, "in": 0, "out": 1, "title": "Spot Y"},
        {"id": "x1", "source": "X.mp4", "type": "pod", "appendTo": "y1", "in": 0, "out": 1} ] }
    """

    private func request(_ url: String, method: String = "GET", body: String? = nil) async throws -> (status: Int, text: String) {
        try await ControlHTTP.text(url, method: method, body: body)
    }

    /// xmllint's verdict on `xml` against the XMLTV DTD.
    private func validate(_ xml: String, name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let path = dir.appendingPathComponent(name).path
        try xml.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try ProcessRunner.run("xmllint", ["--noout", "--dtdvalid", Self.dtd, path], timeout: 30)
        XCTAssertEqual(result.exitCode, 0, "xmllint: \(result.stderrString)\n\(xml)", file: file, line: line)
    }

    /// The programmes of a guide: (title, start, stop) with times as Unix seconds.
    static func programmes(_ xml: String) throws -> [(title: String, start: Double, stop: Double)] {
        let document = try XMLDocument(xmlString: xml)
        return try document.nodes(forXPath: "/tv/programme").compactMap { node in
            guard let element = node as? XMLElement, let start = element.attribute(forName: "start")?.stringValue,
                  let stop = element.attribute(forName: "stop")?.stringValue,
                  let title = element.elements(forName: "title").first?.stringValue else { return nil }
            return (title, try Self.time(start), try Self.time(stop))
        }
    }

    /// `20261127180000 +0000` as Unix seconds.
    static func time(_ text: String) throws -> Double {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyyMMddHHmmss Z"
        return try XCTUnwrap(formatter.date(from: text), text).timeIntervalSince1970
    }

    /// The as-run lines of a file or a response: JSON objects.
    static func lines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    static func seconds(iso text: String) throws -> Double {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return try XCTUnwrap(formatter.date(from: text), text).timeIntervalSince1970
    }

    func testTheGuideValidatesFollowsTheChannelStartAndTakesAnAppendAndTheAsRunMatchesTheRecording() async throws {
        try PlayoutClip.a.make(in: dir, seconds: 4)
        try PlayoutClip.b.make(in: dir, seconds: 3)
        try PlayoutClip.x.make(in: dir, seconds: 2)
        try PlayoutClip.y.make(in: dir, seconds: 2)
        let schedule = dir.appendingPathComponent("schedule.json").path
        try Self.schedule.write(toFile: schedule, atomically: true, encoding: .utf8)
        let epg = dir.appendingPathComponent("epg.xml").path
        let asRun = dir.appendingPathComponent("as-run.jsonl").path
        let local = dir.appendingPathComponent("local.flv").path
        let cli = try RunningCLI(["playout", schedule, server.url(stream: "paper"), "--size", "320x240", "--json",
                                  "--control", "127.0.0.1:0", "--epg", epg, "--as-run", asRun, "--epg-channel", "paper.test",
                                  "--record", local])
        let listening = await cli.awaitLine { $0.contains("controlListening") }
        let line = try XCTUnwrap(listening, "the endpoint never said where it listens: \(cli.output)")
        let base = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["url"] as? String)
        let startedLine = await cli.awaitLine { $0.contains("\"channelStarted\"") }
        let started = try XCTUnwrap(startedLine, "\(cli.output)")
        let channelStart = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(started.utf8)) as? [String: Any])?["start"] as? Double)

        // The guide: valid XMLTV, one programme per clip, from the channel's start (a's slot
        // holds its break: 2 + 2 + 1 s).
        let guide = try await request(base + "/epg.xml")
        XCTAssertEqual(guide.status, 200)
        try validate(guide.text, name: "served.xml")
        let programmes = try Self.programmes(guide.text)
        XCTAssertEqual(programmes.map(\.title), ["Morning <News> & Co", "B.mp4"])
        for (programme, (start, stop)) in zip(programmes, [(0.0, 5.0), (5.0, 7.0)]) {
            XCTAssertEqual(programme.start, channelStart + start, accuracy: 1, programme.title)
            XCTAssertEqual(programme.stop, channelStart + stop, accuracy: 1, programme.title)
        }
        XCTAssertTrue(guide.text.contains("<desc>Today&apos;s news</desc>") && guide.text.contains("<category>News</category>")
                      && guide.text.contains(#"<episode-num system="onscreen">S01E04</episode-num>"#), guide.text)

        // An unknown field is refused, naming it; an append is in the guide, served and on disk.
        let unknown = try await request(base + "/append", method: "POST",
                                        body: #"{"id": "c", "source": "X.mp4", "in": 0, "out": 1, "overlay": "logo.png"}"#)
        XCTAssertEqual(unknown.status, 400)
        XCTAssertTrue(unknown.text.contains("805504004") && unknown.text.contains(#"field \"overlay\""#), unknown.text)
        let append = try await request(base + "/append", method: "POST",
                                       body: #"{"id": "c", "source": "X.mp4", "in": 0, "out": 1, "title": "Late Show"}"#)
        XCTAssertEqual(append.status, 200, append.text)
        let after = try await request(base + "/epg.xml")
        try validate(after.text, name: "appended.xml")
        let appended = try Self.programmes(after.text)
        XCTAssertEqual(appended.map(\.title), ["Morning <News> & Co", "B.mp4", "Late Show"])
        XCTAssertEqual(appended.last?.start ?? 0, channelStart + 7, accuracy: 1)
        XCTAssertEqual(appended.last?.stop ?? 0, channelStart + 8, accuracy: 1)
        var onDisk = ""
        let deadline = ContinuousClock.now + .seconds(10)
        while !onDisk.contains("Late Show"), ContinuousClock.now < deadline {
            onDisk = (try? String(contentsOfFile: epg, encoding: .utf8)) ?? ""
            if !onDisk.contains("Late Show") { try await Task.sleep(for: .milliseconds(20)) }
        }
        XCTAssertTrue(onDisk.contains("Late Show"), "the guide file was rewritten after the append: \(onDisk)")
        try validate(onDisk, name: "file.xml")

        // GET /as-run: the lines so far, as in the file.
        let bAired = await cli.awaitLine { $0.contains("\"aired\"") && $0.contains(#""id":"b""#) }
        XCTAssertNotNil(bAired, "\(cli.output)")
        let soFar = try await request(base + "/as-run")
        XCTAssertEqual(soFar.status, 200)
        XCTAssertEqual(Self.lines(soFar.text).compactMap { $0["id"] as? String }, ["a", "y1", "x1", "a", "b"], soFar.text)

        let exit = await cli.awaitExit(timeout: .seconds(60))
        XCTAssertEqual(exit, 0, cli.output.suffix(5).joined(separator: "\n"))

        // The as-run log: what nginx recorded, item by item, within 80 ms.
        let logged = Self.lines(try String(contentsOfFile: asRun, encoding: .utf8))
        XCTAssertEqual(logged.compactMap { $0["id"] as? String }, ["a", "y1", "x1", "a", "b", "c"], "\(logged)")
        XCTAssertEqual(logged.compactMap { $0["kind"] as? String }, ["content", "ad", "pod", "content", "content", "content"])
        XCTAssertEqual(logged.compactMap { $0["title"] as? String }, ["Morning <News> & Co", "Spot Y", "X.mp4", "Morning <News> & Co", "B.mp4", "Late Show"])
        XCTAssertEqual(Set(logged.compactMap { $0["ended"] as? String }), ["completed"])
        let recording = try PlayoutRecording(path: try await server.awaitRecording(stream: "paper"), frameRate: 25)
        XCTAssertEqual(recording.segments.map(\.name), ["A", "Y", "X", "A", "B", "X"], "\(recording.segments)")
        guard logged.count == 6, recording.segments.count == 6 else { return }
        let starts = try logged.map { try Self.seconds(iso: try XCTUnwrap($0["start"] as? String)) }
        XCTAssertEqual(starts[0], channelStart, accuracy: 0.002, "the first item starts the channel")
        let recorded = recording.starts
        var worst = (start: 0.0, duration: 0.0)
        for index in 0..<6 {
            let duration = try XCTUnwrap(logged[index]["duration"] as? Double)
            let recordedDuration = Double(recording.segments[index].frames) / 25
            XCTAssertEqual(duration, recordedDuration, accuracy: 0.08, "item \(index)'s duration")
            XCTAssertEqual(starts[index] - starts[0], recorded[index] - recorded[0], accuracy: 0.08, "item \(index)'s start")
            worst = (max(worst.start, abs(starts[index] - starts[0] - recorded[index] + recorded[0])), max(worst.duration, abs(duration - recordedDuration)))
        }
        print("as-run against the recording: starts within \(Int(worst.start * 1000)) ms, durations within \(Int(worst.duration * 1000)) ms")
        // The break's lines carry the event id of the cue-out nginx's stream carried at its start.
        let cues = try PlayoutTests.adCues(inFLV: local)
        let out = cues.first { cue in
            if case .insert(let insert) = cue.section.command { insert.outOfNetwork && abs(cue.time - recorded[1]) < 0.1 } else { false }
        }
        let eventID = try XCTUnwrap(out.flatMap { cue -> UInt32? in if case .insert(let i) = cue.section.command { i.eventID } else { nil } },
                                    "\(cues.map { ($0.time, $0.id) })")
        XCTAssertEqual(logged[1]["eventId"] as? Int, Int(eventID))
        XCTAssertEqual(logged[2]["eventId"] as? Int, Int(eventID))
        XCTAssertNil(logged[0]["eventId"])
    }
}
