import Foundation
import LivePush
import Synchronization
import XCTest

/// BGM controls during real-time pushes to nginx-rtmp: pause/resume, http(s) music from a
/// loopback server (playing, and stalling into `bgmDownloadTimeout`), mid-push failures, and
/// the refusal to mix into a stream-copied track.
final class BGMRealTimeTests: NginxTestCase {
    private func realTimeConfig(timeout: Duration = .seconds(5)) -> PushConfig {
        var config = PushConfig()
        config.statsInterval = .zero
        config.bgmDownloadTimeout = timeout
        return config
    }

    /// Pausing the music for ~2 s leaves a hole in the 1000 Hz energy as long as the media sent
    /// meanwhile, while the source plays on; after resuming, the music continues where it was.
    func testPauseAndResumeLeaveAGapInTheMusic() async throws {
        let source = try BGMTestMedia.source(in: dir, seconds: 8)
        let music = try BGMTestMedia.tone(in: dir, hz: 1000, seconds: 20, name: "music.mp3")
        let pusher = LivePusher(config: realTimeConfig())
        let events = pusher.events()
        let watch = pusher.events()
        pusher.bgmVolume = 100
        try pusher.startBGM(source: music)
        // The media sent when the music paused and when it resumed (µs): how long the hole is,
        // however fast the machine kept the push going meanwhile.
        let sent = Mutex((paused: Int64(0), resumed: Int64(0)))
        let push = try await BGMPush.run(pusher, events: events, file: source, server: server, stream: "pause",
                                         timeout: .seconds(30)) { pusher in
            _ = try await PushHelpers.awaitEvent(watch) { ($0.bgmProgressPosition ?? .zero) >= .seconds(2) }
            try pusher.pauseBGM()
            let paused = pusher.stats().mediaTimeSent
            XCTAssertThrowsError(try pusher.pauseBGM(), "pausing twice is an invalid state")
            try await Task.sleep(for: .seconds(2))  // the stimulus: how long the music stays paused
            try pusher.resumeBGM()
            let resumed = pusher.stats().mediaTimeSent
            sent.withLock { $0 = (paused, resumed) }
        }
        let (paused, resumed) = sent.withLock { $0 }
        let expected = Double(resumed - paused) / 1_000_000

        // Short windows, so the gap is measured to 50 ms: the windows the music's edges fall in
        // count as music.
        let windows = push.tones.levels(1000, window: 0.05)
        let quiet = windows.filter { $0.level < 0.01 }.map(\.time)
        let gapStart = try XCTUnwrap(quiet.first), gapEnd = try XCTUnwrap(quiet.last) + 0.05
        XCTAssertEqual(Double(quiet.count) * 0.05, gapEnd - gapStart, accuracy: 0.01, "one contiguous gap: \(quiet)")
        print("music paused at \(Double(paused) / 1e6) s of media sent, resumed at \(Double(resumed) / 1e6) s; gap \(gapStart)-\(gapEnd) s")
        // The edge windows (up to 0.1 s), and the mix runs up to a pacing batch ahead of the
        // sender, more or less at each end.
        XCTAssertEqual(gapEnd - gapStart, expected, accuracy: 0.3, "gap from \(gapStart) to \(gapEnd), \(expected) s of media paused")
        XCTAssertGreaterThan(gapStart, 1.5)
        XCTAssertLessThan(gapEnd, 7.5, "the music came back")
        for (time, level) in push.tones.levels(440, window: 0.5) where time < 7.5 {
            XCTAssertGreaterThan(level, 0.05, "the source plays on at \(time) s")
        }
        let names = push.bgmEvents.map(\.name).filter { $0 != "bgmProgress" }
        XCTAssertEqual(names, ["bgmStarted", "bgmPaused", "bgmResumed"])
        // Progress comes at whole seconds of music pushed: the last one is the 8 s push less the gap, rounded down.
        let last = try XCTUnwrap(push.bgmEvents.compactMap(\.bgmProgressPosition).last)
        XCTAssertEqual(Double(last.components.seconds), 8 - (gapEnd - gapStart) - 0.5, accuracy: 1,
                       "the music continued from where it paused")
    }

    func testHTTPMusicFromALoopbackServerPlays() async throws {
        let source = try BGMTestMedia.source(in: dir, seconds: 4)
        _ = try BGMTestMedia.tone(in: dir, hz: 1000, seconds: 10, name: "music.mp3")
        let http = try BGMHTTPServer(directory: dir)
        defer { http.stop() }
        let pusher = LivePusher(config: realTimeConfig())
        let events = pusher.events()
        let watch = pusher.events()
        pusher.bgmVolume = 100
        try pusher.startBGM(source: http.url("music.mp3"))
        // The push does not wait for a network source (it buffers while the push goes on), so
        // the music would race the push's first frames: the push starts once it has opened.
        _ = try await PushHelpers.awaitEvent(watch) { $0.name == "bgmStarted" }
        let push = try await BGMPush.run(pusher, events: events, file: source, server: server, stream: "http", timeout: .seconds(30))
        XCTAssertEqual(push.bgmEvents.first?.name, "bgmStarted")
        for (time, level) in push.tones.levels(1000, window: 0.5) where time < 3.5 {
            XCTAssertGreaterThan(level, 0.05, "1000 Hz at \(time) s")
        }
    }

    /// A server that never answers, and one that stops sending after half a second of music:
    /// both end in `bgmDownloadTimeout` within the timeout + 1 s of the server going quiet (not
    /// before the timeout, for the one that sent), and the push goes on.
    func testStallingHTTPMusicTimesOutAndThePushGoesOn() async throws {
        let source = try BGMTestMedia.source(in: dir, seconds: 5)
        _ = try BGMTestMedia.tone(in: dir, hz: 1000, seconds: 10, name: "music.wav")
        let http = try BGMHTTPServer(directory: dir, stallAfterBytes: 96_000)  // 0.5 s of 48 kHz stereo s16
        defer { http.stop() }
        var config = realTimeConfig(timeout: .seconds(1))
        config.media.audioMixing = true
        let pusher = LivePusher(config: config)
        let events = pusher.events()
        let watch = pusher.events()
        let push = try await BGMPush.run(pusher, events: events, file: source, server: server, stream: "stall",
                                         timeout: .seconds(30)) { pusher in
            _ = try await PushHelpers.awaitEvent(watch) { $0.name == "pushStarted" }
            for path in ["silent/music.wav", "stall/music.wav"] {
                try pusher.startBGM(source: http.url(path))
                let event = try await PushHelpers.awaitEvent(watch, timeout: .seconds(10)) {
                    $0.name == "bgmDownloadTimeout" || $0.name == "bgmOpenFailed"
                }
                let observed = ContinuousClock.now
                guard case .bgmDownloadTimeout(let error) = event else { return XCTFail("\(path): \(event)") }
                XCTAssertEqual(error.code.rawValue, 0x3001_0502)
                // From the server's last byte, not from startBGM: connecting and the first reads
                // take what a loaded machine gives them.
                let quiet = try XCTUnwrap(http.stoppedSending(path), "\(path): the server saw the request")
                let elapsed = observed - quiet
                print("\(path): timed out \(elapsed) after the server went quiet")
                XCTAssertLessThanOrEqual(elapsed, .seconds(2), "\(path): timeout 1 s + 1 s")
                if path.hasPrefix("stall/") {
                    // Its deadline is re-armed at each read, after the server's last byte.
                    XCTAssertGreaterThanOrEqual(elapsed, .seconds(1), "\(path): not before the timeout")
                }
                XCTAssertEqual(pusher.state, .pushing, "the push goes on")
            }
        }
        XCTAssertFalse(push.run.events.contains { $0.group == .error }, "no error: \(push.run.eventNames)")
        XCTAssertEqual(push.probe.presentationSpan, 5, accuracy: 0.1, "the whole file arrived")
        XCTAssertGreaterThan(push.tones.level(440, from: 0, to: 4.5), 0.05)
    }

    /// Music started during a push that stream-copies its AAC cannot be mixed: `invalidState`,
    /// with a sentence that says what to do; the push is not disturbed.
    func testStartingMusicDuringAStreamCopiedPushIsAnInvalidState() async throws {
        let music = try BGMTestMedia.tone(in: dir, hz: 1000, seconds: 2, name: "music.wav")
        let pusher = LivePusher(config: realTimeConfig())
        let events = pusher.events()
        try pusher.start(file: TestMedia.path(.h264AAC), url: server.url(stream: "copy"))
        _ = try await PushHelpers.awaitEvent(events) { $0.name == "pushStarted" }
        XCTAssertThrowsError(try pusher.startBGM(source: music)) { error in
            let e = error as? LivePushError
            XCTAssertEqual(e?.code, .invalidState)
            XCTAssertTrue(e?.message.contains("audioMixing") ?? false, e?.message ?? "")
        }
        XCTAssertThrowsError(try pusher.playAudioEffect(id: 1, source: music))
        XCTAssertThrowsError(try pusher.pauseBGM(), "nothing to pause")
        try pusher.stop()
        let run = try await PushHelpers.collect(pusher, events, start: .now, timeout: .seconds(10))
        XCTAssertNil(run.error)
        XCTAssertFalse(run.events.contains { $0.group == .bgm })
    }

    /// With `audioMixing`, music can start mid-push: a missing file is reported and the push
    /// goes on; the next start plays.
    func testMidPushOpenFailureThenMusic() async throws {
        let source = try BGMTestMedia.source(in: dir, seconds: 6)
        let music = try BGMTestMedia.tone(in: dir, hz: 1000, seconds: 10, name: "music.mp3")
        let missing = dir.appendingPathComponent("missing.mp3").path
        var config = realTimeConfig()
        config.media.audioMixing = true
        config.statsInterval = .milliseconds(250)
        let pusher = LivePusher(config: config)
        let events = pusher.events()
        let watch = pusher.events()
        pusher.bgmVolume = 100
        // The media sent when the music was started, and when it had opened (µs).
        let sent = Mutex((Int64(0), Int64(0)))
        let push = try await BGMPush.run(pusher, events: events, file: source, server: server, stream: "midpush",
                                         timeout: .seconds(30)) { pusher in
            _ = try await PushHelpers.awaitEvent(watch) { $0.name == "pushStarted" }
            try pusher.startBGM(source: missing)
            _ = try await PushHelpers.awaitEvent(watch) { $0.name == "bgmOpenFailed" }
            XCTAssertEqual(pusher.state, .pushing)
            _ = try await PushHelpers.awaitEvent(watch) {
                if case .stats(let stats) = $0 { stats.mediaTimeSent >= 1_500_000 } else { false }
            }
            let before = pusher.stats().mediaTimeSent
            try pusher.startBGM(source: music)
            _ = try await PushHelpers.awaitEvent(watch) { $0.name == "bgmStarted" }
            let started = pusher.stats().mediaTimeSent
            sent.withLock { $0 = (before, started) }
        }
        let (before, started) = sent.withLock { $0 }
        let (startedAt, openedAt) = (Double(before) / 1e6, Double(started) / 1e6)
        print("music started at \(startedAt) s of media sent, opened at \(openedAt) s")
        XCTAssertNil(push.run.error)
        XCTAssertEqual(push.bgmEvents.map(\.name).filter { $0 != "bgmProgress" }, ["bgmOpenFailed", "bgmStarted"])
        // The mix happens where the producer is, at or ahead of what was sent.
        XCTAssertLessThan(push.tones.level(1000, from: 0, to: startedAt - 0.1), 0.01, "no music before it started")
        // From a pacing batch after it opened, for a second, well inside the 6 s source.
        XCTAssertLessThan(openedAt + 1.3, 5.8, "the music opened at \(openedAt) s, too late to hear a second of it")
        XCTAssertGreaterThan(push.tones.level(1000, from: openedAt + 0.3, to: openedAt + 1.3), 0.05)
    }
}
