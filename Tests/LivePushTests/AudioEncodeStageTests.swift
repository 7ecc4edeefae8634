@testable import LivePush
import Foundation
import XCTest

/// The push's one sound encode after the clock (``AudioEncodeStage``), driven with raw sound
/// and copied packets as the producer hands them over, on libavcodec's real AAC encoder.
final class AudioEncodeStageTests: XCTestCase {
    private let format = AudioFormat(sampleRate: 48000, channels: 2)
    /// One AAC frame at 48 kHz, µs.
    private let frame: Int64 = 21_333

    /// `count` samples of a full-scale 1 kHz tone at output time `at` (µs), as the switcher
    /// hands raw sound over: stamped on the output clock.
    private func sound(at time: Int64, count: Int = 1024, rate: Int = 48000, channels: Int = 2, tone: Bool = true) throws -> MediaPacket {
        var frame = try AudioFrame(sampleRate: rate, channels: channels, sampleCount: count, timestamp: time)
        if tone {
            for c in 0..<channels {
                try frame.withMutableChannel(c) { samples in
                    for i in 0..<samples.count { samples[i] = sinf(Float(i) * 2 * .pi * 1000 / Float(rate)) * 0.9 }
                }
            }
        }
        return .rawSound(frame)
    }

    private func run(_ stage: AudioEncodeStage, _ packets: [MediaPacket], finish: Bool = false) throws -> [MediaPacket] {
        var out: [MediaPacket] = []
        for packet in packets {
            try stage.process(packet) { (coded: MediaPacket) throws(LivePushError) in out.append(coded) }
        }
        if finish { try stage.finish { (coded: MediaPacket) throws(LivePushError) in out.append(coded) } }
        return out
    }

    /// 50 blocks of 1024 samples from output time 0: AAC frames at the samples' times from 0
    /// on (the priming frame, stamped -1024 samples, is not sent: it would precede the push),
    /// every one coded, due when the raw sound that completed it was.
    func testRawSoundComesOutAsAACAtItsOutputTimes() throws {
        let stage = try AudioEncodeStage(format: format, bitrate: 128_000, mixer: nil, main: true)
        XCTAssertEqual(stage.trackInfo.audioSpecificConfig, AACLowComplexityConfig.audioSpecificConfig(sampleRate: 48000, channels: 2))
        var packets = try (0..<50).map { try sound(at: format.micros(ofSamples: Int64($0) * 1024)) }
        for index in packets.indices { packets[index].due = 7_000 + Int64(index) }
        let out = try run(stage, packets, finish: true)
        XCTAssertGreaterThanOrEqual(out.count, 50)
        XCTAssertEqual(out.first?.pts, 0, "no priming frame before the push's start")
        XCTAssertTrue(out.allSatisfy { !$0.data.isEmpty && $0.kind == .audio && $0.sound == nil && $0.dts == $0.pts })
        let expected = (0..<40).map { format.micros(ofSamples: Int64($0) * 1024) }
        XCTAssertTrue(zip(out.prefix(40).map(\.pts), expected).allSatisfy { abs($0 - $1) <= 1 }, "\(out.prefix(40).map(\.pts))")
        XCTAssertTrue(out.prefix(40).allSatisfy { $0.due >= 7_000 && $0.due < 7_050 })
        assertMediaContract(out)
    }

    /// A copied packet after raw sound comes after the encode of everything before it (the
    /// tail padded to a frame); raw sound after it starts a fresh encoder at its own time.
    func testACopiedPacketAfterRawSoundComesAfterTheDrainedEncode() throws {
        let stage = try AudioEncodeStage(format: format, bitrate: 128_000, mixer: nil, main: true)
        let raw = try (0..<10).map { try sound(at: Int64($0) * 10_000, count: 480) }  // 10 ms blocks: 4800 samples
        let copied = MediaPacket(kind: .audio, data: [0x21, 0x10, 0x04], dts: 100_000, pts: 100_000, duration: frame, importance: .key)
        let out = try run(stage, raw + [copied])
        XCTAssertEqual(out.last?.data, copied.data, "the copied packet passes as it is, last")
        let coded = out.dropLast()
        XCTAssertGreaterThanOrEqual(coded.count, 5, "4800 samples: 5 frames (the last padded), the encoder's delay drained")
        XCTAssertTrue(coded.allSatisfy { $0.pts < 100_000 + frame && !$0.data.isEmpty })
        XCTAssertEqual(coded.map(\.pts), coded.map(\.pts).sorted())

        let after = try run(stage, try (0..<10).map { try sound(at: 200_000 + Int64($0) * frame) }, finish: true)
        XCTAssertEqual(after.first?.pts, 200_000, "a fresh encoder, on the raw sound's time, its priming not sent")
        XCTAssertEqual(after.map(\.pts), after.map(\.pts).sorted())
    }

    /// The mixer is attached while raw sound is on air and let go once copied sound follows,
    /// so the pusher refuses music that nothing would mix in (it checks the attachment), and
    /// attaches again with the next raw sound.
    func testTheMixerIsHeldOnlyWhileRawSoundIsOnAir() throws {
        let mixer = AudioMixer()
        let stage = try AudioEncodeStage(format: format, bitrate: 128_000, mixer: mixer, main: false)
        XCTAssertFalse(mixer.isAttached, "a push that copies its sound holds no lease")
        _ = try run(stage, try (0..<3).map { try sound(at: Int64($0) * frame) })
        XCTAssertTrue(mixer.isAttached, "raw sound on air (a slate, an alternate)")
        let copied = MediaPacket(kind: .audio, data: [0x21, 0x10, 0x04], dts: 100_000, pts: 100_000, duration: frame, importance: .key)
        _ = try run(stage, [copied])
        XCTAssertFalse(mixer.isAttached, "copied sound back on air")
        _ = try run(stage, [try sound(at: 200_000)])
        XCTAssertTrue(mixer.isAttached)
    }

    /// Raw sound of another rate and channel count (a slate's) is converted to the push's
    /// format: it comes out at the push's rate, on time, and the header stays the push's.
    func testSoundOfAnotherFormatIsConverted() throws {
        let stage = try AudioEncodeStage(format: format, bitrate: 128_000, mixer: nil, main: true)
        let first = try (0..<20).map { try sound(at: format.micros(ofSamples: Int64($0) * 1024)) }
        let end = format.micros(ofSamples: 20 * 1024)
        // 44.1 kHz mono, 1 s: 44100 samples in blocks of 1470.
        let slate = try (0..<30).map { try sound(at: end + Int64($0) * 33_333, count: 1470, rate: 44100, channels: 1) }
        let out = try run(stage, first + slate, finish: true)
        let samples = 48000 * (Double(end) / 1e6 + 1)
        XCTAssertEqual(Double(out.count), samples / 1024, accuracy: 3, "about \(Int(samples / 1024)) frames at 48 kHz")
        let steps = zip(out.dropFirst(), out).map { $0.pts - $1.pts }
        XCTAssertTrue(steps.allSatisfy { abs($0 - frame) <= 1 }, "back to back at the push's rate: \(Set(steps))")
    }

    /// A gap on the output timeline (the clock laid the next input where the pictures ended)
    /// is filled with silence; an overlap is cut: the frames keep the raw sound's times.
    func testAGapIsFilledAndAnOverlapIsCut() throws {
        let stage = try AudioEncodeStage(format: format, bitrate: 128_000, mixer: nil, main: true)
        let before = try (0..<10).map { try sound(at: format.micros(ofSamples: Int64($0) * 1024)) }
        // 100 ms of nothing, then sound again.
        let gapStart = format.micros(ofSamples: 10 * 1024) + 100_000
        let after = try (0..<10).map { try sound(at: gapStart + format.micros(ofSamples: Int64($0) * 1024)) }
        let out = try run(stage, before + after, finish: true)
        let last = try XCTUnwrap(out.last?.pts)
        XCTAssertEqual(Double(last), Double(gapStart + format.micros(ofSamples: 9 * 1024)), accuracy: Double(frame),
                       "the sound after the gap is where it was stamped, not 100 ms early")
    }

    /// The push's mixer runs over the frames it encodes (here the source muted: the tone
    /// becomes silence, which AAC codes in a few bytes), and the stage holds its lease.
    func testThePushsMixerIsApplied() throws {
        let mixer = AudioMixer()
        let loud = try AudioEncodeStage(format: format, bitrate: 128_000, mixer: nil, main: true)
        let tone = try (0..<20).map { try sound(at: format.micros(ofSamples: Int64($0) * 1024)) }
        let loudBytes = try run(loud, tone, finish: true).dropFirst(2).map(\.data.count).reduce(0, +)
        try mixer.apply(.setSourceMuted(true))
        XCTAssertFalse(mixer.isAttached)
        let muted = try AudioEncodeStage(format: format, bitrate: 128_000, mixer: mixer, main: true)
        XCTAssertTrue(mixer.isAttached, "the stage attaches the push's mixer")
        let mutedBytes = try run(muted, tone, finish: true).dropFirst(2).map(\.data.count).reduce(0, +)
        XCTAssertLessThan(mutedBytes * 5, loudBytes, "muted: \(mutedBytes) bytes against \(loudBytes)")
    }

    /// A push that copies its sound opens no encoder: copied packets pass as they are, and the
    /// mixer stays unattached until raw sound comes.
    func testACopiedPushOpensNoEncoderUntilRawSoundComes() throws {
        let mixer = AudioMixer()
        let stage = try AudioEncodeStage(format: format, bitrate: 128_000, mixer: mixer, main: false)
        XCTAssertFalse(mixer.isAttached)
        let copied = MediaPacket(kind: .audio, data: [1, 2, 3], dts: 0, pts: 0, duration: frame, importance: .key)
        XCTAssertEqual(try run(stage, [copied]).map(\.data), [[1, 2, 3]])
        XCTAssertFalse(mixer.isAttached, "no encoder for copied sound")
        _ = try run(stage, [try sound(at: frame)])
        XCTAssertTrue(mixer.isAttached, "the first raw sound opens it")
    }

    /// With Opus outputs (WHIP) each coded packet carries the mixed frame it was made from, and
    /// the Opus encode takes that (no AAC decode): Opus packets from the sound's output time on.
    func testOpusOutputsTakeTheMixedSound() throws {
        let stage = try AudioEncodeStage(format: format, bitrate: 128_000, mixer: nil, main: true, keepsMixedSound: true)
        let out = try run(stage, try (0..<50).map { try sound(at: format.micros(ofSamples: Int64($0) * 1024)) }, finish: true)
        XCTAssertTrue(out.allSatisfy { $0.sound != nil }, "every packet has its sound")
        XCTAssertTrue(zip(out, out.compactMap(\.sound)).allSatisfy { abs($0.pts - $1.timestamp) <= 1 }, "matched by time")
        let opus = try OpusStage(outputs: [0], outputCount: 2, source: stage.trackInfo)
        var packets: [MediaPacket] = []
        for packet in out { try opus.process(packet, sound: packet.sound) { opus, _ in packets.append(opus) } }
        try opus.finish { opus, _ in packets.append(opus) }
        // 50 × 1024 samples at 48 kHz: 1.067 s, 53 Opus frames of 20 ms (and the encoder's tail).
        XCTAssertEqual(Double(packets.count), 54, accuracy: 2)
        XCTAssertEqual(packets.first?.pts, 0)
        XCTAssertEqual(packets.map(\.pts), packets.indices.map { Int64($0) * 20_000 })
    }

    /// The header the stage announces without an encoder is libavcodec's own.
    func testTheAnnouncedConfigurationIsTheEncoders() throws {
        for rate in [44100, 48000, 22050] {
            for channels in [1, 2] {
                let encoder = try AudioAACEncoder(format: AudioFormat(sampleRate: rate, channels: channels), bitrate: 64_000, mixer: nil)
                XCTAssertEqual(AACLowComplexityConfig.audioSpecificConfig(sampleRate: rate, channels: channels), encoder.audioSpecificConfig,
                               "\(rate) Hz, \(channels) ch")
            }
        }
        XCTAssertNil(AACLowComplexityConfig.audioSpecificConfig(sampleRate: 44000, channels: 2))
    }
}
