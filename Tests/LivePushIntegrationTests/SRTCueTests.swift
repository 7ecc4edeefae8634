import Foundation
import XCTest

/// Cues over SRT: what `srt-live-transmit` received (MPEG-TS) read by threefive, an
/// independent SCTE-35 reader, which finds the SCTE-35 PID by the PMT. Each cue's splice time
/// (`pts_time + pts_adjustment`) is compared with the stream's own timeline: its first picture,
/// and the first picture of what the break shows (cut back by colour, as in ``PlayoutTests``).
final class SRTCueTests: XCTestCase {
    private var dir: URL!

    override func setUpWithError() throws {
        try XCTSkipUnless(SRTListener.isAvailable, "srt-live-transmit (srt-tools) not installed")
        dir = try TestMedia.makeTemporaryDirectory(prefix: "SRTCueTests")
    }

    override func tearDown() {
        if let dir { TestMedia.removeTemporaryDirectory(dir) }
        dir = nil
    }

    /// The issue's requirement: a playout schedule over SRT, in real time, carries each of its
    /// ad breaks as a splice_insert, out of the network, `break_duration` the break, within 0.2 s
    /// of the break's start on the stream's timeline. Two midrolls: X at 4 s for 3 s, Y at 9 s for 1 s
    /// (12 s in all).
    func testAPlayoutOverSRTCarriesEachAdBreakAsASpliceInsertAtItsStart() async throws {
        try PlayoutClip.a.make(in: dir, seconds: 8)
        try PlayoutClip.x.make(in: dir, seconds: 3)
        try PlayoutClip.y.make(in: dir, seconds: 1)
        let schedule = dir.appendingPathComponent("schedule.json").path
        try """
        { "content": [ {"id": "a", "source": "A.mp4", "in": 0, "out": 8} ],
          "ads": [ {"id": "x", "source": "X.mp4", "type": "midroll", "at": 4, "in": 0, "out": 3},
                   {"id": "y", "source": "Y.mp4", "type": "midroll", "at": 6, "in": 0, "out": 1} ] }
        """.write(toFile: schedule, atomically: true, encoding: .utf8)
        // On the stream: A 0–4, X 4–7, A 7–9, Y 9–10, A 10–12.
        let breaks = [(start: 4.0, duration: 3.0, segment: 1), (start: 9.0, duration: 1.0, segment: 3)]

        let listener = try SRTListener(in: dir)
        let cli = try RunningCLI(["playout", schedule, "srt://127.0.0.1:\(listener.port)", "--size", "320x240", "--json"])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let exit = await cli.awaitExit(timeout: .seconds(40))
        XCTAssertEqual(exit, 0, cli.standardError)
        XCTAssertTrue(listener.awaitExit(timeout: 10), "the listener saw the connection close")

        let recording = try PlayoutRecording(path: listener.outputPath, frameRate: 25)
        print("SRTCueTests playout: \(recording.segments), starting at \(recording.starts)")
        XCTAssertEqual(recording.segments.map(\.name), ["A", "X", "A", "Y", "A"])
        XCTAssertTrue(recording.probe.streams.contains { $0.codecName == "scte_35" }, "ffprobe finds the SCTE-35 stream in the PMT")
        let first = try XCTUnwrap(recording.probe.videoPackets.compactMap(\.ptsTime).min(), "a first picture")
        let cues = try ReceivedCue.read(listener.outputPath)
        for cue in cues { print("SRTCueTests playout: \(cue.describe(from: first))") }
        XCTAssertTrue(cues.allSatisfy { $0.command == "Splice Insert" }, "\(cues.map(\.command))")

        let outs = cues.filter(\.outOfNetwork)
        for (index, expected) in breaks.enumerated() {
            let atBreak = outs.filter { abs($0.splice - first - expected.start) <= 0.2 }
            XCTAssertFalse(atBreak.isEmpty, "break \(index) (\(expected.start) s): cue-outs at \(outs.map { $0.splice - first })")
            for cue in atBreak {
                XCTAssertEqual(cue.breakDuration ?? -1, expected.duration, accuracy: 0.1, "break \(index)'s length")
                if recording.starts.count > expected.segment {
                    XCTAssertEqual(cue.splice, recording.starts[expected.segment], accuracy: 0.2,
                                   "break \(index)'s cue is at the ad's first picture")
                }
                // (No arrival: the cue came before the first picture.)
                XCTAssertLessThanOrEqual(cue.arrival ?? first, cue.splice + 0.04, "break \(index)'s cue came by its splice")
            }
        }
        XCTAssertTrue(outs.allSatisfy { out in breaks.contains { abs(out.splice - first - $0.start) <= 0.2 } },
                      "no cue-out but at a break: \(outs.map { $0.splice - first })")
        // The returns, each where A comes back after its break.
        let returns = cues.filter { !$0.outOfNetwork }
        XCTAssertEqual(returns.count, 2, "a return after each break: \(returns.map { $0.splice - first })")
        for (back, segment) in zip(returns, [2, 4]) where recording.starts.count > segment {
            XCTAssertEqual(back.splice, recording.starts[segment], accuracy: 0.2, "the return is at A's first picture after the break")
        }
    }

    /// A source's own SCTE-35 passes through to an SRT output: a TS whose timeline starts at
    /// 11.4 s (A, then B from 5 s), cued out at 2 s for 2 s and back at 4 s (media time), pushed
    /// with alternate content (X) to fill the break. The cues arrive as sections, re-stamped onto
    /// the output's timeline (which starts at 1.4 s): where X starts and where the source comes back.
    func testASourcesCuesPassThroughToAnSRTOutputRestampedToWhereTheyPlay() async throws {
        let source = try CuedTestMedia.make(in: dir, main: .a, seconds: 5, then: .b, for: 5,
                                            cues: [.init(eventID: 7, at: 2, duration: 2, ahead: 1.5),
                                                   .init(eventID: 7, at: 4, duration: nil, ahead: 1)],
                                            timestampOffset: 10)
        let sourceCues = try ReceivedCue.read(source)
        XCTAssertEqual(sourceCues.count, 2, "threefive reads both cues in the source")
        // scte35inject leaves out the file's last partial chunk: B is as long as what is left.
        let sourceSeconds = Double(try FFProbe.run(source).videoPackets.count) / 25
        XCTAssertGreaterThan(sourceSeconds, 6, "B follows the return")
        let alternate = try PlayoutClip.x.make(in: dir, seconds: 3)

        let listener = try SRTListener(in: dir)
        let cli = try RunningCLI(["push", source, "srt://127.0.0.1:\(listener.port)", "--alternate", alternate, "--json"])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let exit = await cli.awaitExit(timeout: .seconds(40))
        XCTAssertEqual(exit, 0, cli.standardError)
        XCTAssertTrue(listener.awaitExit(timeout: 10), "the listener saw the connection close")

        let recording = try PlayoutRecording(path: listener.outputPath, frameRate: 25)
        print("SRTCueTests pass-through: \(recording.segments), starting at \(recording.starts)")
        XCTAssertEqual(recording.segments.map(\.name), ["A", "X", "A", "B"])
        let first = try XCTUnwrap(recording.probe.videoPackets.compactMap(\.ptsTime).min(), "a first picture")
        XCTAssertEqual(first, 1.4, accuracy: 0.05, "the output's own timeline, not the source's")
        let cues = try ReceivedCue.read(listener.outputPath)
        for cue in sourceCues { print("SRTCueTests source: \(cue.describe(from: 11.4))") }
        for cue in cues { print("SRTCueTests pass-through: \(cue.describe(from: first))") }

        XCTAssertEqual(cues.map(\.outOfNetwork), [true, false], "the cue-out and the return, once each")
        XCTAssertEqual(cues.map(\.eventID), [7, 7], "the source's own splice_event_id")
        guard cues.count == 2, recording.starts.count == 4 else { return }
        let (out, back) = (cues[0], cues[1])
        XCTAssertEqual(out.splice - first, 2, accuracy: 0.2, "the cue-out, at 2 s of the stream")
        XCTAssertEqual(out.splice, recording.starts[1], accuracy: 0.2, "the cue-out is where X plays")
        XCTAssertEqual(out.breakDuration ?? -1, 2, accuracy: 0.01)
        XCTAssertEqual(back.splice - first, 4, accuracy: 0.2, "the return, at 4 s of the stream")
        XCTAssertEqual(back.splice, recording.starts[2], accuracy: 0.2, "the return is where the source comes back")
        XCTAssertLessThan(out.arrival ?? .infinity, out.splice - 1, "passed on when it arrived, ahead of the splice")
    }
}

/// A SCTE-35 cue read by threefive from an MPEG-TS file (`threefive.Stream(path).decode`).
struct ReceivedCue {
    var command: String
    var eventID: Int?
    var outOfNetwork: Bool
    /// splice_time + pts_adjustment (seconds, 33 bits), on the TS's PTS timeline.
    var splice: Double
    var pts: Double
    var ptsAdjustment: Double
    var breakDuration: Double?
    /// The PTS of the program's last PES before the cue in the stream (threefive's packet data).
    var arrival: Double?

    func describe(from first: Double) -> String {
        "\(command) #\(eventID ?? -1) \(outOfNetwork ? "out" : "in") at \(String(format: "%.3f", splice - first)) s "
            + "(pts_time \(pts) + pts_adjustment \(ptsAdjustment)), break_duration \(breakDuration.map { "\($0)" } ?? "-"), "
            + "arrived at \(arrival.map { String(format: "%.3f", $0 - first) } ?? "?") s"
    }

    static func read(_ path: String) throws -> [ReceivedCue] {
        let python = try PythonTools.python(with: ["threefive"])
        let script = """
        import json, sys, threefive
        def found(cue):
            print(json.dumps(cue.get(), default=str), flush=True)
        threefive.Stream(sys.argv[1]).decode(func=found)
        """
        let result = try ProcessRunner.run(python, ["-c", script, path], timeout: 60)
        XCTAssertTrue(result.succeeded, result.summary)
        let wrap = Double(1 << 33) / 90_000
        return result.stdoutString.split(separator: "\n").compactMap { line -> ReceivedCue? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let command = object["command"] as? [String: Any] else { return nil }
            let info = object["info_section"] as? [String: Any] ?? [:]
            let packet = object["packet_data"] as? [String: Any] ?? [:]
            let pts = (command["pts_time"] as? NSNumber)?.doubleValue ?? 0
            let adjustment = (info["pts_adjustment"] as? NSNumber)?.doubleValue ?? 0
            return ReceivedCue(command: command["name"] as? String ?? "?",
                               eventID: (command["splice_event_id"] as? NSNumber)?.intValue,
                               outOfNetwork: command["out_of_network_indicator"] as? Bool ?? false,
                               splice: (pts + adjustment).truncatingRemainder(dividingBy: wrap), pts: pts, ptsAdjustment: adjustment,
                               breakDuration: (command["break_duration"] as? NSNumber)?.doubleValue,
                               arrival: (packet["pts"] as? NSNumber)?.doubleValue)
        }
    }
}
