import Foundation
import LivePush
import LivePushWire
import XCTest

/// A schedule played to nginx as one stream, then cut back into its entries by colour and tone:
/// the order, each entry's length, the continuity of the timestamps and A/V at every splice.
final class PlayoutTests: NginxTestCase {
    /// The issue's schedule (clips: A 10 s, B 5 s, X and Y 3 s each).
    static let example = """
    { "loop": 2,
      "content": [ {"id": "a", "source": "A.mp4", "in": 2, "out": 8}, {"id": "b", "source": "B.mp4", "in": 0, "out": 4} ],
      "ads": [
        {"id": "x1", "source": "X.mp4", "type": "preroll", "in": 0, "out": 2, "deleteAfterPlay": true},
        {"id": "y1", "source": "Y.mp4", "type": "midroll", "at": 4, "in": 0, "out": 2, "deleteAfterPlay": true},
        {"id": "x2", "source": "X.mp4", "type": "pod", "appendTo": "y1", "in": 0, "out": 1, "deleteAfterPlay": true},
        {"id": "y2", "source": "Y.mp4", "type": "midroll", "at": 8, "in": 0, "out": 1, "deleteAfterPlay": false},
        {"id": "x3", "source": "X.mp4", "type": "postroll", "in": 0, "out": 1} ] }
    """

    private func makeClips() throws {
        try PlayoutClip.a.make(in: dir, seconds: 10)
        try PlayoutClip.b.make(in: dir, seconds: 5)
        try PlayoutClip.x.make(in: dir, seconds: 3)
        try PlayoutClip.y.make(in: dir, seconds: 3)
    }

    private func writeSchedule(_ json: String) throws -> String {
        let path = dir.appendingPathComponent("schedule.json").path
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private func playout(_ schedule: String, stream: String, extra: [String] = ["--fast"]) throws -> ProcessRunner.Result {
        try LivePushCLI.run(["playout", schedule, server.url(stream: stream), "--size", "320x240", "--json"] + extra, timeout: 120)
    }

    private func events(_ result: ProcessRunner.Result) -> [[String: Any]] {
        result.stdoutString.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    private func startedEntries(_ result: ProcessRunner.Result) -> [String] {
        events(result).filter { $0["event"] as? String == "entryStarted" }.compactMap { ($0["entry"] as? [String: Any])?["id"] as? String }
    }

    /// Checks the recording against (clip, seconds) pairs: order, lengths (within `tolerance`
    /// frames), the tone of each segment, A/V at each splice, and timestamp continuity.
    static func check(_ recording: PlayoutRecording, against expected: [(PlayoutClip, Double)], tolerance: Int = 1,
                       file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(recording.segments.map(\.name), expected.map(\.0.name), "\(recording.segments)", file: file, line: line)
        guard recording.segments.count == expected.count else { return }
        for (index, (segment, (clip, seconds))) in zip(recording.segments, expected).enumerated() {
            let frames = Int((seconds * recording.frameRate).rounded())
            XCTAssertLessThanOrEqual(abs(segment.frames - frames), tolerance,
                                     "entry \(index) (\(clip.name)): \(segment.frames) frames, expected \(frames)", file: file, line: line)
        }
        let starts = recording.starts
        for (index, (clip, seconds)) in expected.enumerated() where clip.tone > 0 {
            let middle = starts[index] + seconds / 2
            let level = recording.audio.level(clip.tone, from: middle - seconds / 4, to: middle + seconds / 4)
            XCTAssertGreaterThan(level, 0.06, "entry \(index) (\(clip.name)) sounds like itself", file: file, line: line)
            guard index > 0, expected[index - 1].0.tone != clip.tone, let heard = recording.audioSplice(to: clip, around: starts[index]) else { continue }
            XCTAssertEqual(heard, starts[index], accuracy: 0.04, "A/V at the splice into entry \(index) (\(clip.name))", file: file, line: line)
        }
        recording.probe.assertWellFormed(file: file, line: line)
        let video = recording.probe.videoPackets.compactMap(\.dtsTime)
        let steps = zip(video, video.dropFirst()).map { $1 - $0 }
        XCTAssertGreaterThan(steps.min() ?? 0, 0, "video timestamps increase", file: file, line: line)
        // A splice lands where both tracks ended: the sound may run a little past the last
        // picture, which then stays that much longer on screen. No gap of more than one frame.
        XCTAssertLessThanOrEqual(steps.max() ?? 1, 2 / recording.frameRate + 0.0015, "no gap over one frame in the pictures",
                                 file: file, line: line)
        let audio = recording.probe.audioPackets.compactMap(\.dtsTime)
        let audioSteps = zip(audio, audio.dropFirst()).map { $1 - $0 }
        XCTAssertGreaterThan(audioSteps.min() ?? 0, 0, "audio timestamps increase", file: file, line: line)
        XCTAssertLessThanOrEqual(audioSteps.max() ?? 1, 0.0233 + 1 / recording.frameRate, "no hole in the sound over one frame",
                                 file: file, line: line)
    }

    func testTheIssuesScheduleInEncodeModeFrameExact() async throws {
        try makeClips()
        let local = dir.appendingPathComponent("local.flv").path
        let result = try playout(try writeSchedule(Self.example), stream: "example", extra: ["--fast", "--record", local])
        XCTAssertEqual(result.exitCode, 0, result.summary)
        XCTAssertEqual(startedEntries(result), ["x1", "a", "y1", "x2", "a", "b", "y2", "b", "a", "b", "y2", "b", "x3"])
        let breakEvents = events(result).filter { ($0["event"] as? String)?.hasPrefix("adBreak") ?? false }.compactMap { $0["break"] as? String }
        XCTAssertEqual(breakEvents, ["preroll", "preroll", "y1", "y1", "y2", "y2", "y2", "y2", "postroll", "postroll"])
        let recording = try PlayoutRecording(path: try await server.awaitRecording(stream: "example"), frameRate: 25)
        let (a, b, x, y) = (PlayoutClip.a, PlayoutClip.b, PlayoutClip.x, PlayoutClip.y)
        Self.check(recording, against: [(x, 2), (a, 4), (y, 2), (x, 1), (a, 2), (b, 2), (y, 1), (b, 2),
                                   (a, 6), (b, 2), (y, 1), (b, 2), (x, 1)])
        XCTAssertEqual(recording.probe.presentationSpan, 28, accuracy: 0.1)

        // Every break is announced in the stream: an onAdCue whose SCTE-35 splice_insert says out
        // of the network at the break's first picture, for the whole break (a pod is one break).
        // (The segment each break starts at, and its length: preroll, y1 + its pod, y2, y2 again, postroll.)
        let breaks = [(0, 2.0), (2, 3.0), (6, 1.0), (10, 1.0), (12, 1.0)].map { (start: recording.starts[$0.0], duration: $0.1) }
        let cues = try Self.adCues(inFLV: local)
        XCTAssertFalse(cues.contains { $0.handler != "onAdCue" }, "no cue wrapped in @setDataFrame: \(cues.map(\.handler))")
        let outs = cues.filter { if case .insert(let i) = $0.section.command { i.outOfNetwork } else { false } }
        for (index, expected) in breaks.enumerated() {
            let atSplice = outs.filter { abs($0.time - expected.start) < 0.1 && abs($0.tagTime - $0.time) < 0.1 }
            XCTAssertEqual(atSplice.count, 1, "break \(index) at \(expected.start) s: \(outs.map { ($0.time, $0.tagTime) })")
            if let cue = atSplice.first {
                XCTAssertEqual(cue.duration, expected.duration, accuracy: 0.1, "break \(index)'s length")
                guard case .insert(let insert) = cue.section.command else { continue }
                XCTAssertEqual(Double(insert.spliceTime ?? 0) / 90_000, expected.start, accuracy: 0.1)
                XCTAssertEqual(Double(insert.breakDuration ?? 0) / 90_000, expected.duration, accuracy: 0.1)
                if index > 0 {
                    XCTAssertTrue(outs.contains { $0.id == cue.id && $0.tagTime < cue.time - 1.5 }, "break \(index) announced ahead")
                }
            }
        }
        // The returns, and an independent reader (threefive) agrees with every cue.
        XCTAssertEqual(cues.count - outs.count, 4, "a return after each break but the last")
        let decoded = try PythonTools.threefive(cues.map(\.base64))
        XCTAssertEqual(decoded.count, cues.count)
        for (cue, other) in zip(cues, decoded) {
            let command = other["command"] as? [String: Any]
            XCTAssertEqual(command?["name"] as? String, "Splice Insert")
            XCTAssertEqual(command?["out_of_network_indicator"] as? Bool, cue.section.command.isOut)
            XCTAssertEqual(command?["pts_time"] as? Double ?? -1, cue.time, accuracy: 0.001)
        }
    }

    /// The onAdCue data messages of an FLV file: handler, id, time, duration, the section.
    struct RecordedCue {
        var handler: String
        var id: String
        var time: Double
        var duration: Double
        var tagTime: Double
        var base64: String
        var section: SpliceInfoSection
    }

    static func adCues(inFLV path: String) throws -> [RecordedCue] {
        let tags = try FLVFileReader.tags(in: [UInt8](Data(contentsOf: URL(fileURLWithPath: path))))
        return try tags.filter { $0.type == .script }.compactMap { tag -> RecordedCue? in
            let values = try AMF0.decode(tag.body)
            guard case .string(let handler) = values.first, handler != "onMetaData",
                  let fields = values.dropFirst().first?.properties else { return nil }
            func value(_ key: String) -> AMF0Value? { fields.first { $0.key == key }?.value }
            guard case .string(let base64) = value("cue"), case .number(let time) = value("time"),
                  case .number(let duration) = value("duration"), case .string(let id) = value("id"),
                  let bytes = Data(base64Encoded: base64) else { return RecordedCue(handler: handler, id: "", time: 0, duration: 0,
                                                                                     tagTime: 0, base64: "", section: .init(command: .null)) }
            return RecordedCue(handler: handler, id: id, time: time, duration: duration, tagTime: Double(tag.timestampMs) / 1000,
                               base64: base64, section: try SpliceInfoSection(parsing: [UInt8](bytes)))
        }
    }

    func testAMissingClipIsFilledByTheSlateAndTheChannelGoesOn() async throws {
        try makeClips()
        let schedule = try writeSchedule("""
        { "content": [ {"id": "a", "source": "A.mp4", "in": 0, "out": 2}, {"id": "gone", "source": "missing.mp4", "in": 0, "out": 1},
                       {"id": "b", "source": "B.mp4", "in": 0, "out": 2} ] }
        """)
        let result = try playout(schedule, stream: "slate")
        XCTAssertEqual(result.exitCode, 0, result.summary)
        let failed = events(result).filter { $0["event"] as? String == "entryFailed" }
        XCTAssertEqual(failed.count, 1)
        XCTAssertEqual(((failed.first?["error"] as? [String: Any])?["code"] as? Int), 805504002)
        let recording = try PlayoutRecording(path: try await server.awaitRecording(stream: "slate"), frameRate: 25)
        Self.check(recording, against: [(.a, 2), (.slate, 1), (.b, 2)])
        XCTAssertLessThan(recording.audio.level(440, from: 2.2, to: 2.8) + recording.audio.level(660, from: 2.2, to: 2.8), 0.01,
                          "silence under the slate")
    }

    /// Live ingest: an entry whose source is a feed's URL plays the feed for its slot, at the
    /// channel's format, between two files; a feed that does not answer is a failed entry, and the
    /// slate fills its slot.
    func testALiveEntryPlaysTheFeedForItsSlotAndAnUnansweredOneIsTheSlate() async throws {
        try makeClips()
        let feed = try RunningCLI(executable: "/usr/bin/ffmpeg", ["-v", "error", "-nostdin", "-re", "-stream_loop", "-1", "-i",
                                                                  dir.appendingPathComponent("X.mp4").path, "-c", "copy", "-f", "flv",
                                                                  server.url(stream: "feedx")])
        defer { kill(feed.processIdentifier, SIGKILL) }
        let deadline = ContinuousClock.now + .seconds(15)
        while !server.errorLog.contains("publish: name='feedx'") && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let schedule = try writeSchedule("""
        { "content": [ {"id": "a", "source": "A.mp4", "in": 0, "out": 2},
                       {"id": "live", "source": "\(server.url(stream: "feedx"))", "in": 0, "out": 4},
                       {"id": "b", "source": "B.mp4", "in": 0, "out": 2},
                       {"id": "away", "source": "\(server.url(stream: "nobody"))", "in": 0, "out": 2},
                       {"id": "y", "source": "Y.mp4", "in": 0, "out": 1} ] }
        """)
        let asRun = dir.appendingPathComponent("as-run.jsonl").path
        let result = try playout(schedule, stream: "live", extra: ["--as-run", asRun])
        XCTAssertEqual(result.exitCode, 0, result.summary)
        XCTAssertEqual(startedEntries(result), ["a", "live", "b", "away", "y"])
        // The as-run log: the live entry's slot (its URL without the stream key), the slate for the one that never answered.
        let logged = ScheduleExportsTests.lines(try String(contentsOfFile: asRun, encoding: .utf8))
        XCTAssertEqual(logged.compactMap { $0["kind"] as? String }, ["content", "content", "content", "slate", "content"], "\(logged)")
        XCTAssertEqual(logged.count > 1 ? logged[1]["source"] as? String : nil, "rtmp://127.0.0.1:\(server.port)/live/feed****")
        for (line, seconds) in zip(logged, [2.0, 4, 2, 2, 1]) {
            XCTAssertEqual(line["duration"] as? Double ?? 0, seconds, accuracy: 0.08, "\(line)")
        }
        let failed = events(result).filter { $0["event"] as? String == "entryFailed" }.compactMap { ($0["entry"] as? [String: Any])?["id"] as? String }
        XCTAssertEqual(failed, ["away"])
        let recording = try PlayoutRecording(path: try await server.awaitRecording(stream: "live"), frameRate: 25)
        Self.check(recording, against: [(.a, 2), (.x, 4), (.b, 2), (.slate, 2), (.y, 1)], tolerance: 2)
    }

    func testClipsOfOtherSizesRatesAndCodecsAreEncodedToTheChannelsFormat() async throws {
        try PlayoutClip.a.make(in: dir, seconds: 4, size: "640x360", rate: 30, sampleRate: 48_000,
                               codecs: ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-c:a", "libopus"], ext: "mkv")
        try PlayoutClip.b.make(in: dir, seconds: 3, size: "176x144", rate: 15)
        let schedule = try writeSchedule("""
        { "content": [ {"id": "a", "source": "A.mkv", "in": 1, "out": 3}, {"id": "b", "source": "B.mp4", "in": 0.5, "out": 2.5},
                       {"id": "a2", "source": "A.mkv", "in": 0, "out": 1} ] }
        """)
        let result = try playout(schedule, stream: "mixed")
        XCTAssertEqual(result.exitCode, 0, result.summary)
        let path = try await server.awaitRecording(stream: "mixed")
        let recording = try PlayoutRecording(path: path, frameRate: 25)
        Self.check(recording, against: [(.a, 2), (.b, 2), (.a, 1)])
        XCTAssertEqual(recording.probe.videoStream?.width, 320, "the channel's size")
        XCTAssertEqual(recording.probe.audioStream?.sampleRate, 44_100, "the channel's sample rate")
    }

    func testCopyModeCutsOnKeyframesAndAnnouncesEachClipsConfiguration() async throws {
        try PlayoutClip.a.make(in: dir, seconds: 6)
        try PlayoutClip.y.make(in: dir, seconds: 3, size: "640x360")  // another SPS: a new sequence header
        let schedule = try writeSchedule("""
        { "content": [ {"id": "a", "source": "A.mp4", "in": 0, "out": 4} ],
          "ads": [ {"id": "y", "source": "Y.mp4", "type": "midroll", "at": 2, "in": 0, "out": 2} ] }
        """)
        let result = try playout(schedule, stream: "copy", extra: ["--fast", "--copy"])
        XCTAssertEqual(result.exitCode, 0, result.summary)
        let recording = try PlayoutRecording(path: try await server.awaitRecording(stream: "copy"), frameRate: 25)
        // Cuts fall on the clips' keyframes (one a second): each entry within one GOP (25 frames).
        Self.check(recording, against: [(.a, 2), (.y, 2), (.a, 2)], tolerance: 25)
    }

    func testABadScheduleIsRefusedBeforeAnythingIsPushed() throws {
        let schedule = try writeSchedule("""
        { "content": [ {"id": "a", "source": "A.mp4", "in": 0, "out": 2} ],
          "ads": [ {"id": "p", "source": "X.mp4", "type": "pod", "appendTo": "nobody", "in": 0, "out": 1} ] }
        """)
        let result = try LivePushCLI.run(["playout", schedule, server.url(stream: "bad")], timeout: 30)
        XCTAssertEqual(result.exitCode, 1, result.summary)
        XCTAssertTrue(result.stderrString.contains("805504001 [0x30030401] scheduleInvalid"), result.stderrString)
        XCTAssertTrue(result.stderrString.contains("entry \"p\", field \"appendTo\""), result.stderrString)
        XCTAssertFalse(FileManager.default.fileExists(atPath: server.recordingPath(stream: "bad")), "nothing was pushed")
    }
}

extension SpliceCommand {
    var isOut: Bool { if case .insert(let insert) = self { insert.outOfNetwork } else { false } }
}
