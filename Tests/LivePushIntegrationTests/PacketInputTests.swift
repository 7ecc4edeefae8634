import Foundation
import LivePush
import XCTest

/// Encoded media handed in by the app (what a hardware encoder would produce): H.264 access
/// units in Annex B form and AAC frames with ADTS headers, pushed through ``PacketInput`` with
/// the app's timestamps. nginx receives every one of them, unchanged in number and rate.
final class PacketInputTests: NginxTestCase {
    /// An elementary H.264 stream (25 fps, an access unit delimiter before each access unit, no
    /// B-frames) and an ADTS AAC stream with a 440 Hz tone, 3 s each, made by ffmpeg.
    private func makeElementaryStreams() throws -> (video: [[UInt8]], audio: [[UInt8]]) {
        let h264 = dir.appendingPathComponent("video.h264").path, adts = dir.appendingPathComponent("audio.aac").path
        for args in [
            ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=3", "-c:v", "libx264", "-bf", "0", "-g", "25",
             "-x264-params", "aud=1", "-f", "h264", h264],
            ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=3", "-ac", "2", "-c:a", "aac", "-f", "adts", adts],
        ] {
            let result = try ProcessRunner.run("ffmpeg", ["-v", "error", "-nostdin", "-y"] + args, timeout: 60)
            XCTAssertTrue(result.succeeded, result.summary)
        }
        return (Self.accessUnits(try [UInt8](Data(contentsOf: URL(fileURLWithPath: h264)))),
                Self.adtsFrames(try [UInt8](Data(contentsOf: URL(fileURLWithPath: adts)))))
    }

    /// Splits an Annex B stream before each access unit delimiter (NAL type 9).
    private static func accessUnits(_ stream: [UInt8]) -> [[UInt8]] {
        var starts: [Int] = []
        var i = 0
        while i + 4 < stream.count {
            if stream[i] == 0, stream[i + 1] == 0, stream[i + 2] == 0, stream[i + 3] == 1, stream[i + 4] & 0x1F == 9 {
                starts.append(i)
                i += 4
            }
            i += 1
        }
        return zip(starts, starts.dropFirst() + [stream.count]).map { Array(stream[$0..<$1]) }
    }

    /// Cuts an ADTS stream into frames by the length in each header.
    private static func adtsFrames(_ stream: [UInt8]) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        var i = 0
        while i + 7 <= stream.count {
            let length = Int(stream[i + 3] & 0x03) << 11 | Int(stream[i + 4]) << 3 | Int(stream[i + 5] >> 5)
            guard length >= 7, i + length <= stream.count else { break }
            frames.append(Array(stream[i..<(i + length)]))
            i += length
        }
        return frames
    }

    func testEncodedAccessUnitsAndAACFramesArriveEveryOneAtTheirRate() async throws {
        let (video, audio) = try makeElementaryStreams()
        XCTAssertEqual(video.count, 75)
        let input = try PacketInput(video: .init(width: 320, height: 240, frameRate: 25, parameterSets: video[0]),
                                    audio: .init(sampleRate: 44_100, channels: 2))
        let feeder = Thread {
            var a = 0
            for (index, unit) in video.enumerated() {
                let time = Int64(index) * 40_000
                while a < audio.count, Int64(a) * 1024 * 1_000_000 / 44_100 <= time {
                    try? input.send(aac: audio[a], pts: Int64(a) * 1024 * 1_000_000 / 44_100)
                    a += 1
                }
                try? input.send(h264: unit, pts: time)
            }
            while a < audio.count {
                try? input.send(aac: audio[a], pts: Int64(a) * 1024 * 1_000_000 / 44_100)
                a += 1
            }
            input.finish()
        }
        feeder.start()

        var config = PushConfig()
        config.pacing = .asFastAsPossible
        config.statsInterval = .zero
        let pusher = LivePusher(config: config)
        let events = pusher.events()
        try pusher.start(source: input, url: server.url(stream: "packets"))
        let run = try await PushHelpers.collect(pusher, events, start: .now, timeout: .seconds(30))
        XCTAssertNil(run.error, "\(run.eventNames)")
        let path = try await server.awaitRecording(stream: "packets")
        let probe = try FFProbe.run(path)
        probe.assertWellFormed()
        XCTAssertEqual(probe.videoStream?.width, 320)
        XCTAssertEqual(probe.videoPackets.count, 75, "every access unit")
        XCTAssertEqual(probe.audioPackets.count, audio.count, "every AAC frame")
        XCTAssertTrue(probe.videoPackets.first?.isKeyframe ?? false)
        let dts = probe.videoPackets.compactMap(\.dtsTime)
        let steps = zip(dts, dts.dropFirst()).map { $1 - $0 }
        XCTAssertEqual(steps.min() ?? 0, 0.04, accuracy: 0.0015)
        XCTAssertEqual(steps.max() ?? 0, 0.04, accuracy: 0.0015, "25 fps throughout")
        let tones = try ToneAnalysis(recording: path)
        // ffmpeg's sine source has an amplitude of 1/8.
        XCTAssertGreaterThan(tones.level(440, from: 0.5, to: tones.seconds - 0.5), 0.08, "the AAC frames decode to the tone")
        XCTAssertLessThan(tones.level(1000, from: 0.5, to: tones.seconds - 0.5), 0.01)
        XCTAssertEqual(try DecodedVideo.luma(path, width: 320, height: 240).frames.count, 75, "every access unit decodes")
    }

    func testBadParameterSetsAndPacketsAfterFinishAreRefused() throws {
        XCTAssertThrowsError(try PacketInput(video: .init(width: 320, height: 240, frameRate: 25, parameterSets: [0, 0, 1, 0x65]),
                                             audio: nil)) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .noUsableStream)
        }
        XCTAssertThrowsError(try PacketInput(video: nil, audio: .init(sampleRate: 12_345, channels: 2))) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .unsupportedCodec)
        }
        let input = try PacketInput(video: nil, audio: .init(sampleRate: 48_000, channels: 2))
        XCTAssertThrowsError(try input.send(h264: [0, 0, 0, 1, 0x65, 0], pts: 0)) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .invalidState, "no video track")
        }
        input.finish()
        XCTAssertThrowsError(try input.send(aac: [1, 2, 3], pts: 0)) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .invalidState, "after finish")
        }
    }
}
