import Foundation
import LivePush
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

    /// Pausing the music for ~2 s leaves a ~2 s hole in the 1000 Hz energy, while the source
    /// plays on; after resuming, the music continues where it was.
    func testPauseAndResumeLeaveAGapInTheMusic() async throws {
        let source = try BGMTestMedia.source(in: dir, seconds: 8)
        let music = try BGMTestMedia.tone(in: dir, hz: 1000, seconds: 20, name: "music.mp3")
        let pusher = LivePusher(config: realTimeConfig())
        let events = pusher.events()
        let watch = pusher.events()
        pusher.bgmVolume = 100
        try pusher.startBGM(source: music)
        let push = try await BGMPush.run(pusher, events: events, file: source, server: server, stream: "pause",
                                         timeout: .seconds(30)) { pusher in
            _ = try await PushHelpers.awaitEvent(watch) { ($0.bgmProgressPosition ?? .zero) >= .seconds(2) }
            try pusher.pauseBGM()
            XCTAssertThrowsError(try pusher.pauseBGM(), "pausing twice is an invalid state")
            try await Task.sleep(for: .seconds(2))  // the stimulus: how long the music stays paused
            try pusher.resumeBGM()
        }

        let windows = push.tones.levels(1000, window: 0.25)
        let quiet = windows.filter { $0.level < 0.01 }.map(\.time)
        let gapStart = try XCTUnwrap(quiet.first), gapEnd = try XCTUnwrap(quiet.last) + 0.25
        XCTAssertEqual(Double(quiet.count) * 0.25, gapEnd - gapStart, accuracy: 0.01, "one contiguous gap: \(quiet)")
        XCTAssertEqual(gapEnd - gapStart, 2, accuracy: 0.6, "gap from \(gapStart) to \(gapEnd)")
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
        pusher.bgmVolume = 100
        try pusher.startBGM(source: http.url("music.mp3"))
        let push = try await BGMPush.run(pusher, events: events, file: source, server: server, stream: "http", timeout: .seconds(30))
        XCTAssertEqual(push.bgmEvents.first?.name, "bgmStarted")
        for (time, level) in push.tones.levels(1000, window: 0.5) where time < 3.5 {
            XCTAssertGreaterThan(level, 0.05, "1000 Hz at \(time) s")
        }
    }

    /// A server that never answers, and one that stops sending after half a second of music:
    /// both end in `bgmDownloadTimeout` within the timeout + 1 s, and the push goes on.
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
                let started = ContinuousClock.now
                try pusher.startBGM(source: http.url(path))
                let event = try await PushHelpers.awaitEvent(watch, timeout: .seconds(10)) {
                    $0.name == "bgmDownloadTimeout" || $0.name == "bgmOpenFailed"
                }
                let elapsed = ContinuousClock.now - started
                guard case .bgmDownloadTimeout(let error) = event else { return XCTFail("\(path): \(event)") }
                XCTAssertEqual(error.code.rawValue, 0x3001_0502)
                XCTAssertLessThanOrEqual(elapsed, .seconds(2), "\(path): timeout 1 s + 1 s")
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
        let source = try BGMTestMedia.source(in: dir, seconds: 4)
        let music = try BGMTestMedia.tone(in: dir, hz: 1000, seconds: 10, name: "music.mp3")
        let missing = dir.appendingPathComponent("missing.mp3").path
        var config = realTimeConfig()
        config.media.audioMixing = true
        config.statsInterval = .milliseconds(250)
        let pusher = LivePusher(config: config)
        let events = pusher.events()
        let watch = pusher.events()
        pusher.bgmVolume = 100
        let push = try await BGMPush.run(pusher, events: events, file: source, server: server, stream: "midpush",
                                         timeout: .seconds(30)) { pusher in
            _ = try await PushHelpers.awaitEvent(watch) { $0.name == "pushStarted" }
            try pusher.startBGM(source: missing)
            _ = try await PushHelpers.awaitEvent(watch) { $0.name == "bgmOpenFailed" }
            XCTAssertEqual(pusher.state, .pushing)
            _ = try await PushHelpers.awaitEvent(watch) {
                if case .stats(let stats) = $0 { stats.mediaTimeSent >= 1_500_000 } else { false }
            }
            try pusher.startBGM(source: music)
        }
        XCTAssertNil(push.run.error)
        XCTAssertEqual(push.bgmEvents.map(\.name).filter { $0 != "bgmProgress" }, ["bgmOpenFailed", "bgmStarted"])
        XCTAssertLessThan(push.tones.level(1000, from: 0, to: 1.2), 0.01, "no music before it started")
        XCTAssertGreaterThan(push.tones.level(1000, from: 2.5, to: 3.8), 0.05)
    }
}
