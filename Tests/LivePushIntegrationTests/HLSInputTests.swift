import Foundation
import LivePushWire
import XCTest

/// An HLS input that reads its playlist itself, against a live origin the test runs
/// (`hls_origin.py`: a sliding window of 1 s TS segments made by ffmpeg, one more each second),
/// pushed to nginx. What nginx recorded is decoded and cut by colour: the feed (red, 440 Hz),
/// the alternate or the backup, the feed again.
final class HLSInputTests: NginxTestCase {
    private let feed = PlayoutClip.a
    private let restarted = PlayoutClip.b

    /// Issue 35's "Tags in": `#EXT-OATCLS-SCTE35` (out, 5 s) before segment 6 and
    /// `#EXT-X-CUE-IN` before segment 11, with `--alternate`: the feed 0–6 s, the alternate
    /// 6–11 s, the feed again, each within 0.25 s; continuous timestamps; and no silence over
    /// 0.3 s inside the feed's parts (every segment played whole: before, 40 % of each was lost).
    func testTagsInThePlaylistSwitchToTheAlternateAndBack() async throws {
        try HLSOrigin.segments(of: feed, seconds: 24, prefix: "a", in: dir)
        let alternate = try PlayoutClip.x.make(in: dir, seconds: 3, size: "160x120")
        let out = SpliceInsert(eventID: 7, outOfNetwork: true, spliceTime: nil, breakDuration: 5 * 90_000, autoReturn: true)
        let section = Data(SpliceInfoSection(command: .insert(out)).encoded()).base64EncodedString()
        let origin = try await HLSOrigin(dir: dir, prefix: "a", count: 24,
                                         tags: [(6, "#EXT-OATCLS-SCTE35:\(section)"), (11, "#EXT-X-CUE-IN")])
        defer { origin.stop() }

        let cli = try RunningCLI(["push", origin.playlistURL, server.url(stream: "hls-tags"), "--alternate", alternate,
                                  "--json", "--stats-interval", "0.2"])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let ended = await cli.awaitEvent("breakEnded", timeout: .seconds(40))
        XCTAssertNotNil(ended, "no break ended: \(cli.output.suffix(10)) \(cli.standardError)")
        // Four seconds of the feed after the break.
        let enough = await cli.awaitVideoFramesSent(15 * 25, timeout: .seconds(20))
        XCTAssertNotNil(enough, "never sent 15 s: \(cli.output.suffix(5))")
        cli.interrupt()
        let exit = await cli.awaitExit(timeout: .seconds(30))
        XCTAssertEqual(exit, 0, cli.standardError)
        let names = cli.output.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["event"] as? String
        }
        XCTAssertEqual(names.filter { $0 == "cueReceived" }.count, 2, "\(names)")
        XCTAssertFalse(names.contains("inputLost"), "the feed was never lost: \(names)")

        let recording = try PlayoutRecording(path: try await server.awaitRecording(stream: "hls-tags"), frameRate: 25,
                                             clips: [feed, .x, .slate])
        print("HLSInputTests(tags): \(recording.segments)")
        XCTAssertEqual(recording.segments.map(\.name), ["A", "X", "A"], "\(recording.segments)")
        guard recording.segments.count == 3 else { return }
        XCTAssertEqual(Double(recording.segments[0].frames), 150, accuracy: 6, "the feed 0–6 s")
        XCTAssertEqual(Double(recording.segments[1].frames), 125, accuracy: 6, "the alternate 6–11 s")
        XCTAssertGreaterThanOrEqual(recording.segments[2].frames, 3 * 25, "the feed again")
        recording.probe.assertWellFormed()
        let video = recording.probe.videoPackets.compactMap(\.dtsTime)
        let steps = zip(video, video.dropFirst()).map { $1 - $0 }
        XCTAssertLessThanOrEqual(steps.max() ?? 1, 2.0 / 25 + 0.0015, "continuous timestamps: no gap over one frame")
        let starts = recording.starts
        let end = video.last ?? 0
        for (from, to) in [(starts[0] + 0.1, starts[1] - 0.1), (starts[2] + 0.3, end - 0.5)] {
            let silence = Self.longestSilence(recording.audio, tone: feed.tone, from: from, to: to)
            print("HLSInputTests(tags): longest silence in the feed \(from)–\(to) s: \(silence) s")
            XCTAssertLessThanOrEqual(silence, 0.3, "the feed's sound has no hole over 0.3 s between \(from) and \(to) s")
        }
    }

    /// Issue 35's "Origin restart": the origin's writer stops for 8 s and comes back with a fresh
    /// playlist (media sequence 0, new timestamps). The backup covers the gap, and the output is
    /// back on the feed within `--input-return` + 5 s of the new playlist's first segment; every
    /// attempt in between is bounded (the reader never hangs).
    func testAnOriginThatRestartsIsCoveredByTheBackupAndTheFeedComesBack() async throws {
        try HLSOrigin.segments(of: feed, seconds: 20, prefix: "a", in: dir)
        try HLSOrigin.segments(of: restarted, seconds: 12, prefix: "b", in: dir)
        let backup = try PlayoutClip.y.make(in: dir, seconds: 3, size: "160x120")
        let origin = try await HLSOrigin(dir: dir, prefix: "a", count: 20)
        defer { origin.stop() }

        let cli = try RunningCLI(["push", origin.playlistURL, server.url(stream: "hls-restart"), "--backup", backup,
                                  "--input-timeout", "2", "--input-return", "2", "--json", "--stats-interval", "0.2"])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let playing = await cli.awaitVideoFramesSent(4 * 25, timeout: .seconds(20))
        XCTAssertNotNil(playing, "never sent 4 s of the feed: \(cli.output.suffix(5)) \(cli.standardError)")
        try origin.pause()
        let paused = ContinuousClock.now
        print("HLSInputTests(restart): paused after \(cli.output.last { $0.contains("\"stats\"") }?.prefix(120) ?? "")")
        let toBackup = await cli.awaitLine(timeout: .seconds(10)) { $0.contains("\"switchedToBackup\"") }
        XCTAssertNotNil(toBackup, "the backup never went on air: \(cli.output.suffix(10))")
        // The writer is away 8 s in all.
        try await Task.sleep(until: paused + .seconds(8), clock: .continuous)
        try origin.restart(prefix: "b", count: 12)
        let restartedAt = ContinuousClock.now
        let back = await cli.awaitLine(timeout: .seconds(7)) { $0.contains("\"switchedToPrimary\"") }
        let took = ContinuousClock.now - restartedAt
        print("HLSInputTests(restart): back on the feed \(took) after the new playlist's first segment")
        XCTAssertNotNil(back, "not back on the feed within --input-return + 5 s: \(cli.output.filter { $0.contains("\"input") }.suffix(10))")
        // Three more seconds of the new feed.
        let last = cli.output.last { $0.contains("\"stats\"") }
        let stats = last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }?["stats"] as? [String: Any]
        _ = await cli.awaitVideoFramesSent((stats?["videoFramesSent"] as? Int ?? 0) + 3 * 25, timeout: .seconds(10))
        cli.interrupt()
        let exit = await cli.awaitExit(timeout: .seconds(30))
        XCTAssertEqual(exit, 0, cli.standardError)
        for line in cli.output where line.contains("\"input") || line.contains("switchedTo") { print("HLSInputTests(restart): \(line)") }
        let retries = cli.output.filter { $0.contains("\"inputRetry\"") }.count
        print("HLSInputTests(restart): \(retries) inputRetry events")
        XCTAssertGreaterThan(retries, 0, "the stall was reported")

        let recording = try PlayoutRecording(path: try await server.awaitRecording(stream: "hls-restart"), frameRate: 25,
                                             clips: [feed, restarted, .y, .slate])
        print("HLSInputTests(restart): \(recording.segments)")
        XCTAssertEqual(recording.segments.map(\.name), ["A", "Y", "B"], "the feed, the backup over the gap, the new feed")
        recording.probe.assertWellFormed()
        let video = recording.probe.videoPackets.compactMap(\.dtsTime)
        XCTAssertLessThanOrEqual(zip(video, video.dropFirst()).map { $1 - $0 }.max() ?? 1, 2.0 / 25 + 0.0015, "continuous timestamps")
    }

    /// The longest run (seconds) between `from` and `to` in which `tone` is under a tenth of its
    /// level, measured in 50 ms windows.
    static func longestSilence(_ audio: ToneAnalysis, tone: Double, from: Double, to: Double) -> Double {
        let steady = audio.level(tone, from: from, to: to)
        var longest = 0.0, run = 0.0, t = from
        while t + 0.05 <= to {
            if audio.level(tone, from: t, to: t + 0.05) < steady / 10 { run += 0.05 } else { run = 0 }
            longest = max(longest, run)
            t += 0.05
        }
        return longest
    }
}
