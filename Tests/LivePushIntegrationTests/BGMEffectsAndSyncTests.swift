import Foundation
import LivePush
import XCTest

/// Sound effects over the music and the source, and A/V sync of a long mixed push.
final class BGMEffectsAndSyncTests: NginxTestCase {
    /// Source 440 Hz, music 1000 Hz, a looping 2500 Hz effect and a 1 s 3300 Hz one, all at once;
    /// the short one ends after its second, a stopped one never sounds.
    func testSeveralEffectsMixOverTheMusicAndTheSource() async throws {
        let source = try BGMTestMedia.source(in: dir, seconds: 4)
        let music = try BGMTestMedia.tone(in: dir, hz: 1000, seconds: 10, name: "music.mp3")
        let loop = try BGMTestMedia.tone(in: dir, hz: 2500, seconds: 0.5, name: "loop.wav")
        let once = try BGMTestMedia.tone(in: dir, hz: 3300, seconds: 1, name: "once.wav")
        let stopped = try BGMTestMedia.tone(in: dir, hz: 1800, seconds: 5, name: "stopped.wav")
        let pusher = LivePusher(config: PushHelpers.fastConfig())
        pusher.bgmVolume = 100
        try pusher.startBGM(source: music)
        try pusher.playAudioEffect(id: 1, source: loop, volume: 100, loop: true)
        try pusher.playAudioEffect(id: 2, source: once, volume: 100)
        try pusher.playAudioEffect(id: 3, source: stopped, volume: 100)
        pusher.stopAudioEffect(id: 3)
        XCTAssertEqual(pusher.playingAudioEffects, [1, 2])
        XCTAssertThrowsError(try pusher.playAudioEffect(id: 4, source: dir.appendingPathComponent("missing.wav").path)) {
            XCTAssertEqual(($0 as? LivePushError)?.code, .bgmOpenFailed)
        }
        let push = try await BGMPush.run(pusher, file: source, server: server, stream: "effects")

        let t = push.tones
        for hz in [440.0, 1000, 2500, 3300] {
            XCTAssertGreaterThan(t.level(hz, from: 0.1, to: 0.9), 0.05, "\(hz) Hz in the first second")
        }
        XCTAssertGreaterThan(t.level(2500, from: 2, to: 3.8), 0.05, "the looping effect goes on")
        XCTAssertLessThan(t.level(3300, from: 1.5, to: 3.8), 0.01, "the 1 s effect ended")
        XCTAssertLessThan(t.level(1800, from: 0, to: 3.8), 0.01, "the stopped effect never played")
        // Four tones of 0.125 add up to 0.5 at most: under the limiter's ceiling, untouched.
        XCTAssertLessThanOrEqual(try ToneAnalysis.peak(recording: push.recording), 0.55)
        XCTAssertEqual(pusher.playingAudioEffects, [1])
        pusher.stopAllAudioEffects()
        pusher.stopBGM()
    }

    /// Loud sources overlapping: the limiter keeps every sample under full scale.
    func testLoudMixIsLimitedNotClipped() async throws {
        let source = dir.appendingPathComponent("loud.mp4").path
        let made = try ProcessRunner.run("ffmpeg", ["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
                                                    "testsrc2=size=160x120:rate=25:duration=3", "-f", "lavfi", "-i",
                                                    "sine=frequency=440:sample_rate=44100:duration=3,volume=7", "-c:v", "libx264",
                                                    "-preset", "ultrafast", "-c:a", "aac", "-ac", "2", source])
        XCTAssertTrue(made.succeeded, made.summary)
        let music = dir.appendingPathComponent("loud.wav").path
        let madeMusic = try ProcessRunner.run("ffmpeg", ["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
                                                         "sine=frequency=1000:sample_rate=48000:duration=5,volume=7", music])
        XCTAssertTrue(madeMusic.succeeded, madeMusic.summary)
        let pusher = LivePusher(config: PushHelpers.fastConfig())
        pusher.bgmVolume = 100
        try pusher.startBGM(source: music)
        let push = try await BGMPush.run(pusher, file: source, server: server, stream: "loud")
        // Each tone peaks at ~0.62 per channel; their sum would reach 1.24 and clip.
        XCTAssertLessThanOrEqual(try ToneAnalysis.peak(recording: push.recording), 0.995, "limited under full scale")
        XCTAssertGreaterThan(push.tones.level(440, from: 0.5, to: 2.5), 0.3)
        XCTAssertGreaterThan(push.tones.level(1000, from: 0.5, to: 2.5), 0.3)
    }

    /// A 60 s file pushed as fast as possible with looping music mixed in: the audio track has
    /// no gap and no drift, and starts and ends within 40 ms of the video. Timestamps are made
    /// when the audio is produced, the same in real time and fast pacing, so fast pacing tests
    /// sync as well and takes a second instead of a minute.
    func testSixtySecondMixedPushKeepsAudioAndVideoWithin40Milliseconds() async throws {
        let source = try BGMTestMedia.source(in: dir, seconds: 60, size: "160x120")
        let music = try BGMTestMedia.tone(in: dir, hz: 1000, seconds: 7, name: "music.mp3")
        let pusher = LivePusher(config: PushHelpers.fastConfig())
        try pusher.startBGM(source: music, loop: true)
        let push = try await BGMPush.run(pusher, file: source, server: server, stream: "sync", timeout: .seconds(120))

        push.probe.assertWellFormed()
        let audio = push.probe.audioPackets.compactMap(\.ptsTime), video = push.probe.videoPackets.compactMap(\.ptsTime)
        XCTAssertEqual(video.count, 1500)
        let rate = Double(try XCTUnwrap(push.probe.audioStream?.sampleRate))
        let frame = 1024 / rate
        XCTAssertEqual(audio.first!, video.first!, accuracy: 0.04, "start")
        XCTAssertEqual(audio.last! + frame, video.last! + 0.04, accuracy: 0.04, "end")
        // Each audio packet sits where its sample count says: no gap, no drift (FLV rounds to 1 ms).
        let drift = audio.enumerated().map { (index: $0.offset, drift: abs($0.element - (audio[0] + Double($0.offset) * frame))) }
        let worst = try XCTUnwrap(drift.max { $0.drift < $1.drift })
        XCTAssertLessThan(worst.drift, 0.002, "audio timestamps follow the samples: packet \(worst.index) of \(audio.count) "
            + "at \(audio[worst.index]) s, around: \(audio[max(0, worst.index - 2)..<min(audio.count, worst.index + 3)])")
        // And the content: the music is there from start to end.
        for (time, level) in push.tones.levels(1000, window: 5) where time < 55 {
            XCTAssertGreaterThan(level, 0.03, "music at \(time) s")
        }
    }
}
