import Foundation
@testable import LivePush
import Synchronization
import XCTest

final class AudioRingBufferTests: XCTestCase {
    func testWrapsAroundAndKeepsOrderPerChannel() {
        var ring = AudioRingBuffer(channels: 2, capacity: 5)
        let left: [Float] = [1, 2, 3, 4], right: [Float] = [-1, -2, -3, -4]
        left.withUnsafeBufferPointer { l in right.withUnsafeBufferPointer { r in XCTAssertEqual(ring.write([l, r]), 4) } }
        var out = [[Float]](repeating: [], count: 2)
        XCTAssertEqual(ring.read(upTo: 3) { c, offset, s in XCTAssertEqual(offset, out[c].count); out[c] += s }, 3)
        // 1 left, 4 free: a write of 4 wraps around the end of the storage.
        let more: [Float] = [5, 6, 7, 8]
        more.withUnsafeBufferPointer { m in XCTAssertEqual(ring.write([m, m]), 4) }
        XCTAssertEqual(ring.space, 0)
        more.withUnsafeBufferPointer { m in XCTAssertEqual(ring.write([m, m]), 0, "full") }
        XCTAssertEqual(ring.read(upTo: 10) { c, _, s in out[c] += s }, 5)
        XCTAssertEqual(out[0], [1, 2, 3, 4, 5, 6, 7, 8])
        XCTAssertEqual(out[1], [-1, -2, -3, -4, 5, 6, 7, 8])
        XCTAssertTrue(ring.isEmpty)
    }

    func testResetToAnotherChannelCountEmptiesIt() {
        var ring = AudioRingBuffer(channels: 2, capacity: 8)
        let s: [Float] = [1, 2]
        _ = s.withUnsafeBufferPointer { p in ring.write([p, p]) }
        ring.reset(channels: 1)
        XCTAssertEqual(ring.count, 0)
        XCTAssertEqual(ring.channels, 1)
    }
}

final class AudioLimiterTests: XCTestCase {
    func testQuietAudioPassesUntouched() throws {
        var frame = try AudioMixerTests.frame(value: 0.5)
        var limiter = AudioLimiter()
        try limiter.process(&frame)
        XCTAssertEqual(AudioMixerTests.values(frame), [0.5, 0.5])
        XCTAssertEqual(limiter.gain, 1)
    }

    func testLoudAudioStaysUnderTheCeilingAndTheGainRecovers() throws {
        var limiter = AudioLimiter()
        var loud = try AudioMixerTests.frame(value: 1.8)
        try limiter.process(&loud)
        for c in 0..<2 {
            loud.withChannel(c) { XCTAssertLessThanOrEqual($0.max()!, AudioLimiter.ceiling + 1e-6) }
        }
        XCTAssertLessThan(limiter.gain, 0.6)
        // 80 ms time constant: after half a second of quiet audio the gain is back to 1.
        for _ in 0..<24 {
            var quiet = try AudioMixerTests.frame(value: 0.1)
            try limiter.process(&quiet)
        }
        XCTAssertEqual(limiter.gain, 1)
    }
}

final class AudioMixerTests: XCTestCase {
    static let format = AudioFormat(sampleRate: 48_000, channels: 2)

    static func frame(value: Float, count: Int = 1024) throws -> AudioFrame {
        var frame = try AudioFrame(sampleRate: format.sampleRate, channels: format.channels, sampleCount: count)
        for c in 0..<2 { try frame.withMutableChannel(c) { for i in 0..<$0.count { $0[i] = value } } }
        return frame
    }

    /// First sample of each channel.
    static func values(_ frame: AudioFrame) -> [Float] { (0..<frame.channels).map { c in frame.withChannel(c) { $0[0] } } }

    /// A 16-bit stereo WAV at 48 kHz holding one constant value.
    private func constantWAV(value: Int16, seconds: Double) throws -> String {
        try StereoWAV.write(samples: Int(seconds * 48_000), prefix: "livepush-mixer", in: self) { _ in (value, value) }
    }

    func testWithNothingToMixTheFrameIsLeftAlone() throws {
        let mixer = AudioMixer()
        let lease = mixer.attach(format: Self.format)
        var frame = try Self.frame(value: 0.3)
        let before = frame.storage
        try mixer.process(&frame)
        XCTAssertTrue(frame.storage === before, "not even copied")
        XCTAssertEqual(Self.values(frame), [0.3, 0.3])
        XCTAssertTrue(mixer.isAttached)
        _ = lease
    }

    func testSourceVolumeAndMute() throws {
        let mixer = AudioMixer()
        let lease = mixer.attach(format: Self.format)
        try mixer.apply(.setSourceVolume(40))
        var frame = try Self.frame(value: 0.5)
        try mixer.process(&frame)
        XCTAssertEqual(Self.values(frame)[0], 0.2, accuracy: 1e-6)
        try mixer.apply(.setSourceMuted(true))
        frame = try Self.frame(value: 0.5)
        try mixer.process(&frame)
        XCTAssertEqual(Self.values(frame), [0, 0])
        try mixer.apply(.setSourceVolume(250))
        XCTAssertEqual(mixer.sourceVolume, 100, "clamped")
        _ = lease
    }

    func testLeaseEndsWithThePush() {
        let mixer = AudioMixer()
        var lease: AudioMixerLease? = mixer.attach(format: Self.format)
        XCTAssertTrue(mixer.isAttached)
        lease = nil
        XCTAssertNil(lease)
        XCTAssertFalse(mixer.isAttached)
    }

    /// A 0.5 s WAV of 0.25 at BGM volume 50 adds 0.125 to every sample until it has been mixed
    /// to its end; progress counts what was mixed; `bgmCompleted` follows the last sample.
    func testMixesMusicAtItsVolumeThenCompletes() throws {
        let wav = try constantWAV(value: 8192, seconds: 0.5)
        let mixer = AudioMixer()
        let events = Mutex<[PushEvent]>([])
        let started = expectation(description: "bgmStarted")
        mixer.setReporter { event in
            events.withLock { $0.append(event) }
            if event == .bgmStarted { started.fulfill() }
        }
        XCTAssertFalse(mixer.hasSources)
        try mixer.apply(.startBGM(source: wav, loop: false, timeout: .seconds(2)))
        XCTAssertTrue(mixer.hasSources, "a push started now mixes")
        let lease = mixer.attach(format: Self.format)
        wait(for: [started], timeout: 10)
        var mixed = 0, last: AudioFrame?
        for _ in 0..<30 {
            var frame = try Self.frame(value: 0.1)
            try mixer.process(&frame)
            let value = Self.values(frame)[0]
            if abs(value - 0.225) < 1e-4 { mixed += 1 } else { XCTAssertEqual(value, 0.1, accuracy: 1e-6) }
            last = frame
            if events.withLock({ $0.contains(.bgmCompleted) }) { break }
        }
        XCTAssertEqual(mixed, 24, "24000 samples: 23 whole frames of 1024 and the start of one more")
        last?.withChannel(0) {
            XCTAssertEqual($0[447], 0.225, accuracy: 1e-4)
            XCTAssertEqual($0[448], 0.1, accuracy: 1e-6, "silence after the music's last sample")
        }
        let all = events.withLock { $0 }
        XCTAssertEqual(all.first, .bgmStarted)
        XCTAssertEqual(all.last, .bgmCompleted)
        let positions: [Duration] = all.compactMap { event -> Duration? in
            if case .bgmProgress(let position, _) = event { return position }
            return nil
        }
        XCTAssertEqual(positions.count, 1, "one progress in half a second of music")
        XCTAssertLessThan(positions.first ?? .seconds(1), .milliseconds(50), "the position after the first frame mixed")
        XCTAssertFalse(mixer.hasSources)
        _ = lease
    }

    /// Music started before the push is in the push's very first frame: attaching waits for a
    /// local file that is still opening (the player reports it on a thread of its own), instead
    /// of leaving the first frames without it, which in `--fast` is half a second of media.
    func testMusicStartedBeforeAttachIsInTheFirstFrame() throws {
        let wav = try constantWAV(value: 8192, seconds: 0.5)
        let mixer = AudioMixer()
        try mixer.apply(.startBGM(source: wav, loop: false, timeout: .seconds(2)))
        let lease = mixer.attach(format: Self.format)  // no wait for bgmStarted: the push's own start
        var frame = try Self.frame(value: 0.1)
        try mixer.process(&frame)
        XCTAssertEqual(Self.values(frame)[0], 0.225, accuracy: 1e-4, "0.1 of source and 0.125 of music")
        _ = lease
    }

    func testAtMostEightEffectsPlayAtOnce() throws {
        let wav = try constantWAV(value: 8192, seconds: 0.5)
        let pusher = LivePusher()
        defer { pusher.stopAllAudioEffects() }
        for id in 0..<LivePusher.maxSimultaneousAudioEffects {
            try pusher.playAudioEffect(id: id, source: wav, loop: true)
        }
        XCTAssertThrowsError(try pusher.playAudioEffect(id: 99, source: wav)) {
            XCTAssertEqual(($0 as? LivePushError)?.code, .invalidState)
        }
        XCTAssertNoThrow(try pusher.playAudioEffect(id: 3, source: wav, loop: true), "restarting one that plays is fine")
        pusher.stopAudioEffect(id: 0)
        XCTAssertNoThrow(try pusher.playAudioEffect(id: 99, source: wav), "room again after a stop")
    }

    func testPauseAndResumeAreInvalidWithoutMusic() {
        let mixer = AudioMixer()
        XCTAssertThrowsError(try mixer.apply(.setBGMPaused(true))) { XCTAssertEqual(($0 as? LivePushError)?.code, .invalidState) }
        XCTAssertThrowsError(try mixer.apply(.setBGMPaused(false)))
    }
}

/// Music URLs can carry credentials or tokens: errors must not repeat them.
final class AudioSourceSecretsTests: XCTestCase {
    private func openError(_ source: String) -> LivePushError? {
        do {
            _ = try AudioFileDecoder(source: source, timeout: .milliseconds(500), interrupt: IOInterrupt())
            return nil
        } catch {
            return error
        }
    }

    func testUnsupportedAndUnreachableSourcesAreReportedWithoutSecrets() throws {
        // Port 1 on loopback: nothing listens, the connection is refused at once.
        for source in ["ftp://user:hunter2@127.0.0.1/x.mp3?token=SECRETVALUE123",
                       "http://user:hunter2@127.0.0.1:1/x.mp3?token=SECRETVALUE123"] {
            let error = try XCTUnwrap(openError(source), source)
            XCTAssertTrue([.bgmOpenFailed, .bgmDownloadTimeout].contains(error.code), "\(error)")
            XCTAssertFalse(error.description.contains("hunter2"), error.description)
            XCTAssertFalse(error.description.contains("SECRETVALUE123"), error.description)
            XCTAssertTrue(error.description.contains("token=SECR****"), error.description)
        }
    }
}
