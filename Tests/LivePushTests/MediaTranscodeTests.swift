import Foundation
@testable import LivePush
import XCTest

/// The transcoding path: non-H.264/AAC inputs and forceTranscode become H.264 AVCC + AAC.
final class MediaTranscodeTests: XCTestCase {
    var files: MediaTestFiles!

    override func setUpWithError() throws {
        try XCTSkipUnless(MediaTestFiles.toolsAvailable, "ffmpeg/ffprobe not installed")
        files = try MediaTestFiles()
    }

    override func tearDown() {
        files = nil
    }

    func assertTranscoded(_ path: String, sourceFrames: Int, options: MediaSourceOptions = .init(),
                          file: StaticString = #filePath, line: UInt = #line) throws -> [MediaPacket] {
        let source = try MediaInputFactory.open(path: path, options: options)
        // The input yields pictures; the push encodes them after the clock.
        XCTAssertNotNil(source.info.video?.pictureSettings, "a transcoded file yields pictures", file: file, line: line)
        let (info, packets) = try MediaTestFiles.drainEncoded(source)
        let video = try XCTUnwrap(info.video, file: file, line: line)
        XCTAssertEqual(video.decoderConfiguration.first, 1, file: file, line: line)
        let config = try XCTUnwrap(AVCCFormat.parseDecoderConfiguration(video.decoderConfiguration), file: file, line: line)
        XCTAssertEqual(config.lengthSize, 4, file: file, line: line)
        XCTAssertFalse(config.sps.isEmpty, file: file, line: line)
        XCTAssertFalse(config.pps.isEmpty, file: file, line: line)
        XCTAssertEqual(video.width, 160, file: file, line: line)
        XCTAssertEqual(video.height, 120, file: file, line: line)
        XCTAssertEqual(video.frameRate, 25, accuracy: 0.01, file: file, line: line)
        let audio = try XCTUnwrap(info.audio, file: file, line: line)
        XCTAssertFalse(audio.audioSpecificConfig.isEmpty, file: file, line: line)
        XCTAssertTrue([44100, 48000].contains(audio.sampleRate), file: file, line: line)

        assertMediaContract(packets, file: file, line: line)
        let videoPackets = packets.filter { $0.kind == .video }
        XCTAssertEqual(videoPackets.count, sourceFrames, "every frame encoded, encoder flushed", file: file, line: line)
        XCTAssertEqual(videoPackets.first?.importance, .key, file: file, line: line)
        // 2 s of audio is about 86 AAC frames at 44.1 kHz or 94 at 48 kHz.
        let audioCount = packets.filter { $0.kind == .audio }.count
        XCTAssertGreaterThanOrEqual(audioCount, 85, file: file, line: line)
        XCTAssertLessThanOrEqual(audioCount, 96, file: file, line: line)
        // What was produced decodes: every video packet is a frame, every audio packet too.
        let decoded = try files.decodedFrameCounts(info, packets)
        XCTAssertEqual(decoded.video, videoPackets.count, "decodable H.264", file: file, line: line)
        XCTAssertEqual(decoded.audio, audioCount, "decodable AAC", file: file, line: line)
        return packets
    }

    func testMPEG4AndMP3AreTranscoded() throws {
        let path = try files.make("mpeg4.avi", MediaTestFiles.video + MediaTestFiles.audio
            + ["-c:v", "mpeg4", "-c:a", "libmp3lame", "-b:a", "64k"])
        let packets = try assertTranscoded(path, sourceFrames: try MediaTestFiles.packetCount(path, "v"))
        // GOP of 2 s at 25 fps over 2 s of video: one keyframe.
        XCTAssertEqual(packets.filter { $0.kind == .video && $0.importance == .key }.count, 1)
    }

    func testVP9AndOpusAreTranscoded() throws {
        let path = try files.make("vp9.webm", MediaTestFiles.video
            + ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2",
               "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "200k", "-c:a", "libopus"])
        _ = try assertTranscoded(path, sourceFrames: try MediaTestFiles.packetCount(path, "v"))
    }

    func testForceTranscodeAndGOP() throws {
        let path = try files.make("h264.mp4", MediaTestFiles.video + MediaTestFiles.audio
            + ["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"])
        let options = MediaSourceOptions(forceTranscode: true, videoBitrateKbps: 300, audioBitrateKbps: 48, gopSeconds: 0.4)
        let packets = try assertTranscoded(path, sourceFrames: 50, options: options)
        // 10-frame GOP over 50 frames.
        XCTAssertEqual(packets.filter { $0.kind == .video && $0.importance == .key }.count, 5)
    }

    func testMixedCopyVideoTranscodeAudioAndRewind() throws {
        let path = try files.make("mixed.mkv", MediaTestFiles.video + MediaTestFiles.audio
            + ["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "libmp3lame"])
        let source = try MediaInputFactory.open(path: path, options: .init())
        // The MP3 is decoded in the input and encoded to AAC after the clock, as the push does.
        let first = try MediaTestFiles.drainEncoded(source).packets
        assertMediaContract(first)
        XCTAssertEqual(first.filter { $0.kind == .video }.count, 50)
        try source.rewind()
        let second = try MediaTestFiles.drainEncoded(source).packets
        assertMediaContract(second)
        assertSameReplay(first, second)
    }
}
