import Foundation
import LivePush
import XCTest

/// Background music mixed into real pushes to nginx-rtmp (as fast as possible), checked by the
/// tones in what nginx recorded: a 440 Hz source, 1000 Hz music.
final class BGMMixingTests: NginxTestCase {
    /// A present tone is ~0.125 (lavfi's sine amplitude times the volume); an absent one is
    /// AAC noise, far below 0.01.
    private static let present = 0.05
    private static let absent = 0.01

    func testMixesMusicUnderTheSourceWithBothTonesThroughout() async throws {
        let source = try BGMTestMedia.source(in: dir, seconds: 6)
        let music = try BGMTestMedia.tone(in: dir, hz: 1000, seconds: 10, name: "music.mp3")
        let pusher = LivePusher(config: PushHelpers.fastConfig())
        let events = pusher.events()
        pusher.bgmVolume = 100
        try pusher.startBGM(source: music)
        let push = try await BGMPush.run(pusher, events: events, file: source, server: server, stream: "mix")

        push.probe.assertWellFormed()
        XCTAssertEqual(push.probe.audioStream?.codecName, "aac")
        // Every half second after the first carries both tones: the music begins with the push.
        for (time, level) in push.tones.levels(1000, window: 0.5) where time < 5.5 {
            XCTAssertGreaterThan(level, Self.present, "1000 Hz at \(time) s")
        }
        for (time, level) in push.tones.levels(440, window: 0.5) where time < 5.5 {
            XCTAssertGreaterThan(level, Self.present, "440 Hz at \(time) s")
        }
        // Both at full scale (0.125 each) sum to 0.25 at most: nothing to limit, nothing clipped.
        XCTAssertLessThan(push.tones.peak, 0.3)
        let names = push.bgmEvents.map(\.name)
        XCTAssertEqual(names.first, "bgmStarted")
        let positions = push.bgmEvents.compactMap(\.bgmProgressPosition)
        XCTAssertGreaterThanOrEqual(positions.count, 5, "about one progress per second of music")
        XCTAssertEqual(positions, positions.sorted(), "progress only moves forward")
        XCTAssertEqual(Double(positions.last!.components.seconds), 5, accuracy: 1, "position is what was pushed")
        if case .bgmProgress(_, let duration) = push.bgmEvents.last(where: { $0.name == "bgmProgress" }) {
            XCTAssertEqual(Double(duration.components.seconds), 10, accuracy: 0.5)
        }
    }

    func testMusicAtVolumeZeroLeavesOnlyTheSource() async throws {
        let source = try BGMTestMedia.source(in: dir, seconds: 4)
        let music = try BGMTestMedia.tone(in: dir, hz: 1000, seconds: 10, name: "music.wav")
        let pusher = LivePusher(config: PushHelpers.fastConfig())
        pusher.bgmVolume = 0
        try pusher.startBGM(source: music)
        let push = try await BGMPush.run(pusher, file: source, server: server, stream: "bgm0")
        XCTAssertLessThan(push.tones.level(1000, from: 0, to: 4), Self.absent)
        XCTAssertGreaterThan(push.tones.level(440, from: 0, to: 4), Self.present)
    }

    func testSourceAtVolumeZeroLeavesOnlyTheMusic() async throws {
        let source = try BGMTestMedia.source(in: dir, seconds: 4)
        let music = try BGMTestMedia.tone(in: dir, hz: 1000, seconds: 10, name: "music.flac")
        let pusher = LivePusher(config: PushHelpers.fastConfig())
        pusher.bgmVolume = 100
        pusher.sourceVolume = 0
        try pusher.startBGM(source: music)
        let push = try await BGMPush.run(pusher, file: source, server: server, stream: "src0")
        XCTAssertLessThan(push.tones.level(440, from: 0, to: 4), Self.absent)
        XCTAssertGreaterThan(push.tones.level(1000, from: 0, to: 4), Self.present)
    }

    func testMutedSourceAndHalfVolumeMusic() async throws {
        let source = try BGMTestMedia.source(in: dir, seconds: 3)
        let music = try BGMTestMedia.tone(in: dir, hz: 1000, seconds: 10, name: "music.opus")
        let pusher = LivePusher(config: PushHelpers.fastConfig())
        pusher.isSourceMuted = true
        try pusher.startBGM(source: music)  // default volume 50
        let push = try await BGMPush.run(pusher, file: source, server: server, stream: "mute")
        XCTAssertLessThan(push.tones.level(440, from: 0, to: 3), Self.absent)
        XCTAssertEqual(push.tones.level(1000, from: 0.5, to: 2.5), 0.0625, accuracy: 0.012, "half of 0.125")
    }

    /// A video-only file gets an audio track: the music while it plays (2 s, no loop), then
    /// silence, as long as the video, and `bgmCompleted` when the music ends.
    func testVideoOnlySourceGetsAnAudioTrackCarryingTheMusicThenSilence() async throws {
        let source = try BGMTestMedia.source(in: dir, seconds: 5, tone: nil)
        let music = try BGMTestMedia.tone(in: dir, hz: 1000, seconds: 2, name: "short.m4a")
        let pusher = LivePusher(config: PushHelpers.fastConfig())
        let events = pusher.events()
        pusher.bgmVolume = 100
        try pusher.startBGM(source: music)
        let push = try await BGMPush.run(pusher, events: events, file: source, server: server, stream: "videoonly")

        push.probe.assertWellFormed()
        XCTAssertEqual(push.probe.audioStream?.codecName, "aac")
        XCTAssertGreaterThan(push.tones.level(1000, from: 0.2, to: 1.8), Self.present)
        XCTAssertLessThan(push.tones.level(1000, from: 2.5, to: 4.8), Self.absent, "silence after the music")
        let audio = push.probe.audioPackets, video = push.probe.videoPackets
        let audioEnd = (audio.last?.ptsTime ?? 0) + (audio.last?.durationTime ?? 0)
        let videoEnd = (video.last?.ptsTime ?? 0) + 0.04
        XCTAssertEqual(audioEnd, videoEnd, accuracy: 0.05, "the audio track lasts as long as the video")
        XCTAssertEqual(audio.first?.ptsTime ?? 1, video.first?.ptsTime ?? 0, accuracy: 0.04)
        XCTAssertEqual(push.bgmEvents.map(\.name).filter { $0 != "bgmProgress" }, ["bgmStarted", "bgmCompleted"])
    }

    func testLoopingMusicRestartsAndKeepsPlaying() async throws {
        let source = try BGMTestMedia.source(in: dir, seconds: 5)
        let music = try BGMTestMedia.tone(in: dir, hz: 1000, seconds: 1.5, name: "loop.wav")
        let pusher = LivePusher(config: PushHelpers.fastConfig())
        let events = pusher.events()
        pusher.bgmVolume = 100
        try pusher.startBGM(source: music, loop: true)
        let push = try await BGMPush.run(pusher, events: events, file: source, server: server, stream: "loop")
        for (time, level) in push.tones.levels(1000, window: 0.5) where time < 4.5 {
            XCTAssertGreaterThan(level, Self.present, "1000 Hz at \(time) s")
        }
        let seconds = push.bgmEvents.compactMap(\.bgmProgressPosition).map(\.components.seconds)
        XCTAssertTrue(zip(seconds, seconds.dropFirst()).contains { $1 < $0 }, "position went back to 0: \(seconds)")
        XCTAssertFalse(push.bgmEvents.contains { $0.name == "bgmCompleted" })
    }

    /// The push mixes its music after the clock, over whatever input is on air: an app's own
    /// sound (a ``FrameInput``, which encoded its sound without the music before) carries it too.
    func testMusicPlaysOverAnAppsFrames() async throws {
        let music = try BGMTestMedia.tone(in: dir, hz: 1000, seconds: 10, name: "music.wav")
        let pusher = LivePusher(config: PushHelpers.fastConfig())
        let events = pusher.events()
        pusher.bgmVolume = 100
        try pusher.startBGM(source: music)
        let input = try FrameInput(video: nil, audio: .init(sampleRate: 48_000, channels: 2))
        try pusher.start(source: input, url: server.url(stream: "appbgm"))
        let feeder = Thread {
            for block in 0..<(3 * 48_000 / 1024) {
                guard var frame = try? AudioFrame(sampleRate: 48_000, channels: 2, sampleCount: 1024,
                                                  timestamp: Int64(block) * 1024 * 1_000_000 / 48_000) else { break }
                for channel in 0..<2 {
                    _ = try? frame.withMutableChannel(channel) { samples in
                        for i in 0..<1024 { samples[i] = 0.125 * Float(sin(2 * Double.pi * 440 * Double(block * 1024 + i) / 48_000)) }
                    }
                }
                try? input.send(frame)
            }
            input.finish()
        }
        feeder.start()
        let run = try await PushHelpers.collect(pusher, events, start: .now, timeout: .seconds(40))
        XCTAssertNil(run.error, "\(run.eventNames)")
        let tones = try ToneAnalysis(recording: try await server.awaitRecording(stream: "appbgm"))
        XCTAssertGreaterThan(tones.level(440, from: 0.5, to: 2.5), Self.present, "the app's sound")
        XCTAssertGreaterThan(tones.level(1000, from: 0.5, to: 2.5), Self.present, "the music over it")
    }

    /// Music that cannot be opened is reported, and music started after that plays.
    func testOpenFailuresAreReportedAndTheNextStartWorks() async throws {
        let source = try BGMTestMedia.source(in: dir, seconds: 3)
        let music = try BGMTestMedia.tone(in: dir, hz: 1000, seconds: 5, name: "music.mp3")
        let notAudio = dir.appendingPathComponent("notes.txt")
        try Data("just some text, not audio".utf8).write(to: notAudio)
        let videoOnly = try BGMTestMedia.source(in: dir, seconds: 1, tone: nil, name: "silent-video.mp4")
        let pusher = LivePusher(config: PushHelpers.fastConfig())
        let events = pusher.events()
        for bad in [dir.appendingPathComponent("missing.mp3").path, notAudio.path, videoOnly, dir.path, "ftp://127.0.0.1/x.mp3"] {
            try pusher.startBGM(source: bad)
            let event = try await PushHelpers.awaitEvent(events, timeout: .seconds(10)) { $0.group == .bgm }
            guard case .bgmOpenFailed(let error) = event else { return XCTFail("\(bad): \(event)") }
            XCTAssertEqual(error.code.rawValue, 0x3001_0501)
            XCTAssertTrue(error.message.hasPrefix("The background music could not be opened."), error.message)
        }
        pusher.bgmVolume = 100
        try pusher.startBGM(source: music)
        let push = try await BGMPush.run(pusher, events: events, file: source, server: server, stream: "retry")
        XCTAssertEqual(push.bgmEvents.first?.name, "bgmStarted")
        XCTAssertGreaterThan(push.tones.level(1000, from: 0.5, to: 2.5), Self.present)
    }
}
