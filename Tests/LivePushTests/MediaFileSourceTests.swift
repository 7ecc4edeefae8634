import Foundation
@testable import LivePush
import XCTest

/// Stream-copy behaviour and error mapping, on tiny files made with the ffmpeg CLI.
final class MediaFileSourceTests: XCTestCase {
    var files: MediaTestFiles!

    override func setUpWithError() throws {
        try XCTSkipUnless(MediaTestFiles.toolsAvailable, "ffmpeg/ffprobe not installed")
        files = try MediaTestFiles()
    }

    override func tearDown() {
        files = nil
    }

    func makeMP4(_ name: String = "av.mp4", extra: [String] = []) throws -> String {
        try files.make(name, MediaTestFiles.video + MediaTestFiles.audio
            + ["-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-sc_threshold", "0", "-bf", "0", "-c:a", "aac", "-b:a", "64k"] + extra)
    }

    func testMP4StreamCopy() throws {
        let path = try makeMP4()
        let source = try MediaInputFactory.open(path: path, options: .init())
        let info = source.info
        let video = try XCTUnwrap(info.video)
        XCTAssertEqual(video.width, 160)
        XCTAssertEqual(video.height, 120)
        XCTAssertEqual(video.frameRate, 25, accuracy: 0.01)
        XCTAssertEqual(video.decoderConfiguration.first, 1)
        XCTAssertNotNil(AVCCFormat.parseDecoderConfiguration(video.decoderConfiguration))
        let audio = try XCTUnwrap(info.audio)
        XCTAssertEqual(audio.sampleRate, 44100)
        XCTAssertEqual(audio.channels, 1)
        XCTAssertEqual(Array(audio.audioSpecificConfig.prefix(2)), [0x12, 0x08])  // AAC LC, 44100 Hz, mono (+ FFmpeg's SBR sync extension)
        XCTAssertEqual(info.duration, 2_000_000, accuracy: 100_000)

        let packets = try MediaTestFiles.drain(source)
        assertMediaContract(packets)
        let videoPackets = packets.filter { $0.kind == .video }
        let audioPackets = packets.filter { $0.kind == .audio }
        XCTAssertEqual(videoPackets.count, try MediaTestFiles.packetCount(path, "v"))
        XCTAssertEqual(audioPackets.count, try MediaTestFiles.packetCount(path, "a"))
        XCTAssertEqual(videoPackets.first?.importance, .key)
        XCTAssertEqual(videoPackets.filter { $0.importance == .key }.count, 2)  // GOP 25 over 50 frames
        XCTAssertTrue(videoPackets.dropFirst().allSatisfy { $0.importance != .disposable })  // no B-frames
        XCTAssertEqual(videoPackets[1].dts - videoPackets[0].dts, 40_000)
        XCTAssertEqual(videoPackets[0].duration, 40_000)
        XCTAssertGreaterThan(audioPackets[0].duration, 0)
    }

    func testBFramesKeepCompositionOffsetAndAreDisposable() throws {
        let path = try files.make("bframes.mp4", MediaTestFiles.video
            + ["-c:v", "libx264", "-preset", "fast", "-g", "50", "-bf", "2", "-x264-params", "b-pyramid=none"])
        let source = try MediaInputFactory.open(path: path, options: .init())
        XCTAssertNil(source.info.audio)
        let packets = try MediaTestFiles.drain(source)
        assertMediaContract(packets)
        XCTAssertEqual(packets.count, try MediaTestFiles.packetCount(path, "v"))
        XCTAssertEqual(packets.first?.importance, .key)
        XCTAssertEqual(packets.first?.dts, 0)
        XCTAssertTrue(packets.contains { $0.pts > $0.dts })
        XCTAssertTrue(packets.contains { $0.importance == .disposable })
        XCTAssertTrue(packets.contains { $0.importance == .reference })
    }

    func testMPEGTSAnnexBAndADTSAreConverted() throws {
        let path = try files.make("av.ts", MediaTestFiles.video + MediaTestFiles.audio
            + ["-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-bf", "0", "-c:a", "aac", "-b:a", "64k", "-f", "mpegts"])
        let source = try MediaInputFactory.open(path: path, options: .init())
        let video = try XCTUnwrap(source.info.video)
        XCTAssertEqual(video.decoderConfiguration.first, 1)
        XCTAssertNotNil(AVCCFormat.parseDecoderConfiguration(video.decoderConfiguration))
        XCTAssertEqual(video.width, 160)
        let audio = try XCTUnwrap(source.info.audio)
        XCTAssertEqual(audio.audioSpecificConfig, [0x12, 0x08])  // AAC LC, 44100 Hz, mono
        XCTAssertEqual(audio.sampleRate, 44100)

        let packets = try MediaTestFiles.drain(source)
        assertMediaContract(packets)
        let videoPackets = packets.filter { $0.kind == .video }
        XCTAssertEqual(videoPackets.count, try MediaTestFiles.packetCount(path, "v"))
        XCTAssertEqual(videoPackets.first?.importance, .key)
        // No start codes and no access unit delimiters left.
        for p in videoPackets {
            _ = p.data.withUnsafeBufferPointer { buf in
                AVCCFormat.forEachNALUnit(in: buf, lengthSize: 4) { r in XCTAssertNotEqual(buf[r.lowerBound] & 0x1F, 9) }
            }
        }
        let audioPackets = packets.filter { $0.kind == .audio }
        XCTAssertEqual(audioPackets.count, try MediaTestFiles.packetCount(path, "a"))
        let decoded = try files.decodedFrameCounts(source.info, packets)
        XCTAssertEqual(decoded.video, videoPackets.count, "decodable H.264")
        XCTAssertEqual(decoded.audio, audioPackets.count, "decodable AAC")
    }

    func testRewindRestartsAtZeroMP4AndTS() throws {
        for name in ["loop.mp4", "loop.ts"] {
            let path = try makeMP4(name, extra: name.hasSuffix(".ts") ? ["-f", "mpegts"] : [])
            let source = try MediaInputFactory.open(path: path, options: .init())
            let first = try MediaTestFiles.drain(source)
            XCTAssertNil(try source.nextPacket())
            try source.rewind()
            let second = try MediaTestFiles.drain(source)
            assertMediaContract(second)
            assertSameReplay(first, second, name)
            // Rewinding halfway through works too.
            try source.rewind()
            _ = try MediaTestFiles.drain(source, limit: 10)
            try source.rewind()
            assertSameReplay(first, try MediaTestFiles.drain(source), name)
        }
    }

    func testAudioOnlyAndVideoOnly() throws {
        let m4a = try files.make("a.m4a", MediaTestFiles.audio + ["-c:a", "aac"])
        let audioOnly = try MediaInputFactory.open(path: m4a, options: .init())
        XCTAssertNil(audioOnly.info.video)
        XCTAssertNotNil(audioOnly.info.audio)
        let audioPackets = try MediaTestFiles.drain(audioOnly)
        assertMediaContract(audioPackets)
        XCTAssertEqual(audioPackets.count, try MediaTestFiles.packetCount(m4a, "a"))

        let flv = try files.make("v.flv", MediaTestFiles.video + ["-c:v", "libx264", "-preset", "ultrafast"])
        let videoOnly = try MediaInputFactory.open(path: flv, options: .init())
        XCTAssertNil(videoOnly.info.audio)
        let videoPackets = try MediaTestFiles.drain(videoOnly)
        assertMediaContract(videoPackets)
        XCTAssertEqual(videoPackets.count, 50)
    }

    func testRawADTSAndAnnexBElementaryStreams() throws {
        let aac = try files.make("raw.aac", MediaTestFiles.audio + ["-c:a", "aac", "-f", "adts"])
        let audioSource = try MediaInputFactory.open(path: aac, options: .init())
        XCTAssertEqual(audioSource.info.audio?.audioSpecificConfig, [0x12, 0x08])
        let audioPackets = try MediaTestFiles.drain(audioSource)
        assertMediaContract(audioPackets)
        XCTAssertEqual(audioPackets.count, try MediaTestFiles.packetCount(aac, "a"))

        let h264 = try files.make("raw.h264", MediaTestFiles.video + ["-c:v", "libx264", "-preset", "ultrafast", "-f", "h264"])
        let videoSource = try MediaInputFactory.open(path: h264, options: .init())
        XCTAssertEqual(videoSource.info.video?.width, 160)
        let videoPackets = try MediaTestFiles.drain(videoSource)
        assertMediaContract(videoPackets)
        XCTAssertEqual(videoPackets.count, 50)
        XCTAssertEqual(try files.decodedFrameCounts(videoSource.info, videoPackets).video, 50)
    }

    func testMKVWithCoverArtIgnoresAttachedPicture() throws {
        let cover = try files.make("cover.png", ["-f", "lavfi", "-i", "color=red:size=32x32", "-frames:v", "1"])
        let path = try files.make("song.mp4", MediaTestFiles.audio + ["-i", cover, "-map", "0:a", "-map", "1:v",
                                                                       "-c:a", "aac", "-c:v", "png", "-disposition:v", "attached_pic"])
        let source = try MediaInputFactory.open(path: path, options: .init())
        XCTAssertNil(source.info.video)
        XCTAssertNotNil(source.info.audio)
        XCTAssertTrue(try MediaTestFiles.drain(source).allSatisfy { $0.kind == .audio })
    }

    func testErrors() throws {
        func code(_ body: () throws -> Void) -> LivePushError.Code? {
            do { try body() } catch let error as LivePushError { return error.code } catch { return nil }
            return nil
        }
        let missing = files.path("nope.mp4")
        XCTAssertEqual(code { _ = try MediaInputFactory.open(path: missing, options: .init()) }, .fileNotFound)
        do {
            _ = try MediaInputFactory.open(path: missing, options: .init())
        } catch {
            XCTAssertEqual(error.detail, missing)
        }
        XCTAssertEqual(code { _ = try MediaInputFactory.open(path: files.directory.path, options: .init()) }, .fileNotFound)

        let text = files.path("notes.txt")
        try Data("just some words, not media at all\n".utf8).write(to: URL(fileURLWithPath: text))
        XCTAssertEqual(code { _ = try MediaInputFactory.open(path: text, options: .init()) }, .notMedia)

        let empty = files.path("empty.mp4")
        try Data().write(to: URL(fileURLWithPath: empty))
        XCTAssertEqual(code { _ = try MediaInputFactory.open(path: empty, options: .init()) }, .notMedia)

        let srt = files.path("subs.srt")
        try Data("1\n00:00:00,000 --> 00:00:01,000\nHello\n\n".utf8).write(to: URL(fileURLWithPath: srt))
        let mkv = try files.make("subs.mkv", ["-i", srt])
        XCTAssertEqual(code { _ = try MediaInputFactory.open(path: mkv, options: .init()) }, .noUsableStream)
    }

    func testTruncatedFileDoesNotCrash() throws {
        let path = try makeMP4("whole.ts", extra: ["-f", "mpegts"])
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let cut = files.path("cut.ts")
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: cut))
        let source = try MediaInputFactory.open(path: cut, options: .init())
        let packets = try MediaTestFiles.drain(source)
        XCTAssertFalse(packets.isEmpty)
        assertMediaContract(packets)
    }
}
