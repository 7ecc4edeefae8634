import Foundation
import XCTest

/// A live input with failover, against nginx: ffmpeg publishes a contribution feed (red, 300 Hz)
/// to `live/feed`; `livepush push rtmp://…/live/feed rtmp://…/live/out --backup X.mp4` relays it.
/// The feed dies about 7 s in and comes back 7 s later as a new publish with new timestamps.
/// What nginx recorded of `live/out` is decoded: the feed, then the backup (lime, 1000 Hz), then
/// the feed again, with no gap in the timestamps. Run in real time and in `--fast` mode: a live
/// input is paced by its arrival in both.
final class FailoverTests: NginxTestCase {
    private let feed = PlayoutClip(name: "A", color: "red", luma: 81, tone: 300)
    private let backup = PlayoutClip(name: "X", color: "lime", luma: 145, tone: 1000)

    func testTheFeedDiesAndComesBackTheBackupFillsAndTheOutputStaysContinuous() async throws {
        try await runFailover(fast: false)
    }

    func testTheSameInFastMode() async throws {
        try await runFailover(fast: true)
    }

    /// An SRT feed (MPEG-TS; ffmpeg is the listener, LivePush calls it) is an input like RTMP: its
    /// pictures and its sound, whole (the TS muxer holds sound back up to 0.7 s; the feed's sound is
    /// taken by the time of the picture on air).
    func testAnSRTFeedIsALiveInput() async throws {
        let (played, stopped) = try await pushSRTFeed(stream: "srt-out", extra: [], frames: 100)
        let tone = played.audio.level(feed.tone, from: 1, to: 3)
        print("FailoverTests(SRT): \(played.segments), tone level \(tone)")
        XCTAssertGreaterThan(tone, 0.08, "the feed's tone, whole (lavfi's sine is 0.125)")
        let sent = stopped["videoFramesSent"] as? Int ?? 0
        XCTAssertGreaterThanOrEqual(sent, 100, "4 s of the feed was pushed")
        let frames = played.segments.filter { $0.name == "A" }.map(\.frames).reduce(0, +)
        XCTAssertEqual(Double(frames), Double(sent), accuracy: 2, "nginx recorded the feed's pictures, and only those: \(played.segments)")
    }

    /// A live input's pictures go through the push's filters. Kept apart from the test above: in a
    /// debug build on a loaded 2-core machine the beauty filter runs about 19 fps, the output
    /// falls behind the feed and the jitter buffer sheds sound (a full run measured the tone at 0.035).
    func testFiltersSeeALiveInputsPictures() async throws {
        let (played, stopped) = try await pushSRTFeed(stream: "srt-filtered", extra: ["--filter", "beauty"], frames: 50)
        let filtered = (stopped["pipeline"] as? [String: Any])?["filteredFrames"] as? Int ?? 0
        let sent = stopped["videoFramesSent"] as? Int ?? 0
        XCTAssertGreaterThanOrEqual(sent, 50, "2 s of the feed was pushed")
        XCTAssertGreaterThanOrEqual(filtered, sent, "the beauty filter saw every picture sent")
        let frames = played.segments.filter { $0.name == "A" }.map(\.frames).reduce(0, +)
        XCTAssertEqual(Double(frames), Double(sent), accuracy: 2, "nginx recorded the feed's pictures, and only those: \(played.segments)")
    }

    /// Pushes an SRT feed (ffmpeg listening, looping the red clip) to nginx until the push says it
    /// has sent `frames` pictures, then stops it; returns what nginx recorded and the figures of
    /// the push's `stopped` event. The feed comes in real time, but how many of its pictures a
    /// debug build gets through in a given time depends on the machine (the beauty filter's debug
    /// build runs 12 to 19 fps on 2 busy cores), so the test waits for the count it needs.
    private func pushSRTFeed(stream: String, extra: [String], frames: Int) async throws -> (PlayoutRecording, [String: Any]) {
        let feedPath = try feed.make(in: dir, seconds: 4)
        let port = try NginxRTMPServer.freeLoopbackPort()
        let listener = try RunningCLI(executable: "/usr/bin/ffmpeg", ["-v", "error", "-nostdin", "-re", "-stream_loop", "-1", "-i", feedPath,
                                                                      "-c", "copy", "-f", "mpegts", "srt://127.0.0.1:\(port)?mode=listener"])
        defer { kill(listener.processIdentifier, SIGKILL) }
        // The feed is there before the push calls it: on a busy machine ffmpeg may bind its
        // port after the first call, and the push would start on the slate (`inputLost`).
        XCTAssertTrue(SRTListener.awaitUDPPortBound(port), "ffmpeg never listened on UDP \(port)")
        let cli = try RunningCLI(["push", "srt://127.0.0.1:\(port)?mode=caller", server.url(stream: stream), "--json",
                                  "--stats-interval", "0.2"] + extra)
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let first = await cli.awaitLine { $0.contains("\"firstFramePushed\"") }
        XCTAssertNotNil(first, "never pushed: \(cli.standardError)")
        let enough = await cli.awaitVideoFramesSent(frames)
        XCTAssertNotNil(enough, "never sent \(frames) pictures: \(cli.output.suffix(5))")
        cli.interrupt()
        let exit = await cli.awaitExit(timeout: .seconds(30))
        XCTAssertEqual(exit, 0, cli.standardError)
        XCTAssertFalse(cli.output.contains { $0.contains("inputLost") }, "the feed was never lost")
        let stopped = cli.stoppedStats ?? [:]
        let played = try PlayoutRecording(path: try await server.awaitRecording(stream: stream), frameRate: 25, clips: [feed, .slate])
        return (played, stopped)
    }

    /// A `--json` line's `t`: seconds on the push's own clock.
    private static func time(of line: String?) -> Double? {
        line.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }?["t"] as? Double
    }

    private func publishFeed(_ path: String) throws -> RunningCLI {
        try RunningCLI(executable: "/usr/bin/ffmpeg", ["-v", "error", "-nostdin", "-re", "-stream_loop", "-1", "-i", path,
                                                       "-c", "copy", "-f", "flv", server.url(stream: "feed")])
    }

    /// Waits (bounded) until nginx has taken `count` publishes of `stream`.
    private func awaitPublishes(_ stream: String, count: Int, timeout: Duration = .seconds(15)) async throws {
        let deadline = ContinuousClock.now + timeout
        while server.errorLog.components(separatedBy: "publish: name='\(stream)'").count - 1 < count {
            guard ContinuousClock.now < deadline else { throw TimeoutError(what: "publish \(count) of \(stream)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    private func runFailover(fast: Bool) async throws {
        let feedPath = try feed.make(in: dir, seconds: 4)
        let backupPath = try backup.make(in: dir, seconds: 3)
        var publisher = try publishFeed(feedPath)
        defer { kill(publisher.processIdentifier, SIGKILL) }
        try await awaitPublishes("feed", count: 1)
        let feedStarted = ContinuousClock.now

        let cli = try RunningCLI(["push", server.url(stream: "feed"), server.url(stream: "out"), "--backup", backupPath,
                                  "--input-timeout", "2", "--json", "--stats-interval", "0.2"] + (fast ? ["--fast"] : []))
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let started = await cli.awaitLine { $0.contains("\"pushStarted\"") }
        XCTAssertNotNil(started, "never published: \(cli.standardError)")

        // The feed dies about 7 s in: the backup must be on air within the input timeout.
        try await Task.sleep(for: .seconds(7) - (ContinuousClock.now - feedStarted))
        // The switch is timed on the push's own clock ("t"), from its last statistics line before
        // the feed died (at most 0.2 s before): how soon this test reads a line is not the push's.
        let beforeDeath = Self.time(of: cli.output.last { $0.contains("\"stats\"") })
        kill(publisher.processIdentifier, SIGKILL)
        let died = ContinuousClock.now
        let toBackup = await cli.awaitLine(timeout: .seconds(10)) { $0.contains("\"switchedToBackup\"") }
        XCTAssertNotNil(toBackup, "the backup never went on air: \(cli.output.suffix(10))")
        if let before = beforeDeath, let switched = Self.time(of: toBackup) {
            XCTAssertLessThan(switched - before, 2 + 0.2 + 1, "the switch took longer than the 2 s timeout allows")
        } else {
            XCTFail("no statistics line before the feed died: \(cli.output.suffix(5))")
        }

        // It comes back 7 s later, as a new publish with new timestamps.
        try await Task.sleep(for: .seconds(7) - (ContinuousClock.now - died))
        publisher = try publishFeed(feedPath)
        try await awaitPublishes("feed", count: 2)
        let toPrimary = await cli.awaitLine(timeout: .seconds(20)) { $0.contains("\"switchedToPrimary\"") }
        XCTAssertNotNil(toPrimary, "the output never went back to the feed: \(cli.output.suffix(10))")
        try await Task.sleep(for: .seconds(3))

        cli.interrupt()
        let exit = await cli.awaitExit(timeout: .seconds(30))
        XCTAssertEqual(exit, 0, cli.standardError)
        let events = cli.output.compactMap { line -> [String: Any]? in
            try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        }
        let names = events.compactMap { $0["event"] as? String }.filter { ["inputLost", "switchedToBackup", "inputRecovered", "switchedToPrimary"].contains($0) }
        XCTAssertEqual(names, ["inputLost", "switchedToBackup", "inputRecovered", "switchedToPrimary"])
        let lost = events.first { $0["event"] as? String == "inputLost" }
        XCTAssertEqual((lost?["error"] as? [String: Any])?["code"] as? Int, 805_503_240, "inputLost's code")
        XCTAssertFalse(cli.output.joined().contains("live/feed"), "the feed's stream name is masked")

        // What nginx recorded: A, then X, then A again; a moment of black only before the first picture.
        let recording = try await server.awaitRecording(stream: "out")
        let played = try PlayoutRecording(path: recording, frameRate: 25, clips: [feed, backup, .slate])
        let segments = played.segments.filter { $0.frames > 2 }
        XCTAssertEqual(segments.map(\.name).drop { $0 == "slate" }, ["A", "X", "A"], "\(played.segments)")
        let starts = played.starts
        if let x = played.segments.firstIndex(where: { $0.name == "X" }), let back = played.segments.lastIndex(where: { $0.name == "A" }),
           back > x {
            XCTAssertGreaterThan(played.audio.level(backup.tone, from: starts[x] + 1, to: starts[x] + 2), 0.02, "X's tone under X")
            XCTAssertGreaterThan(played.audio.level(feed.tone, from: starts[back] + 0.5, to: starts[back] + 1.5), 0.02, "A's tone under A again")
            XCTAssertLessThan(played.audio.level(feed.tone, from: starts[x] + 1, to: starts[x] + 2), 0.01, "no A under X")
        }
        func largestStep(_ times: [Double]) -> Double {
            zip(times, times.dropFirst()).map { $1 - $0 }.max() ?? 0
        }
        let video = played.probe.videoPackets.compactMap(\.dtsTime)
        let audio = played.probe.audioPackets.compactMap(\.dtsTime)
        print("FailoverTests(\(fast ? "fast" : "real time")): \(played.segments); largest steps: video \(largestStep(video)) s, audio \(largestStep(audio)) s")
        // About 17 s on air (7 + 7 + 3, on the test's clock); the timestamps run continuously, so
        // their span says so whatever share of the feed's pictures a busy machine got through,
        // and nginx has every picture the push says it sent.
        XCTAssertGreaterThan((video.last ?? 0) - (video.first ?? 0), 15, "about 17 s or more of pictures")
        let sent = cli.stoppedStats?["videoFramesSent"] as? Int ?? -1
        XCTAssertEqual(Double(video.count), Double(sent), accuracy: 2, "nginx has every picture sent")
        XCTAssertLessThanOrEqual(largestStep(video), 0.1, "a gap in the video timestamps")
        XCTAssertLessThanOrEqual(largestStep(audio), 0.06, "a gap in the audio timestamps")
        XCTAssertTrue(zip(video, video.dropFirst()).allSatisfy { $1 > $0 }, "video timestamps go back")
    }
}
