@testable import LivePush
import Synchronization
import XCTest

/// The push's one video encode after the clock (``VideoEncodeStage``), driven with raw pictures
/// and copied packets as the producer hands them over, on a real libx264.
final class VideoEncodeStageTests: XCTestCase {
    private let frame: Int64 = 40_000

    /// Counts the pictures it sees.
    private final class Counter: VideoFilter {
        let seen = Mutex(0)
        func process(_ frame: inout VideoFrame) throws -> Bool {
            seen.withLock { $0 += 1 }
            return false
        }
    }

    private func makeStage(_ stages: FrameStages = FrameStages()) throws -> VideoEncodeStage {
        let settings = try VideoEncoderSettings(width: 64, height: 48, frameRate: 25, options: MediaSourceOptions())
        return try VideoEncodeStage(settings: settings, stages: stages, main: true, adaptive: false, keepsPictures: false)
    }

    private func picture(at index: Int, keyframe: Bool = false, shownAsIs: Bool = false) throws -> MediaPacket {
        var packet = MediaPacket.rawPicture(try VideoFrame(width: 64, height: 48, timestamp: 0), duration: frame,
                                            keyframe: keyframe, shownAsIs: shownAsIs)
        // Stamped on the output clock, as the switcher hands it over.
        packet.dts = Int64(index) * frame
        packet.pts = packet.dts
        return packet
    }

    private func run(_ stage: VideoEncodeStage, _ packets: [MediaPacket], finish: Bool = false) throws -> [MediaPacket] {
        var out: [MediaPacket] = []
        for packet in packets {
            try stage.process(packet) { (coded: MediaPacket) throws(LivePushError) in out.append(coded) }
        }
        if finish { try stage.finish { (coded: MediaPacket) throws(LivePushError) in out.append(coded) } }
        return out
    }

    /// A copied push that may show a slate opens no encoder at its start (its peak memory is a
    /// copy's): the switcher's header for the first pictures comes empty and leaves filled with
    /// the encode's configuration, opened for them.
    func testACopiedPushOpensItsEncodeOnlyForItsFirstPicturesAndFillsTheirHeader() throws {
        let settings = try VideoEncoderSettings(width: 64, height: 48, frameRate: 25, options: MediaSourceOptions())
        let stage = try VideoEncodeStage(settings: settings, stages: FrameStages(), main: false, adaptive: false, keepsPictures: false)
        XCTAssertEqual(stage.decoderConfiguration, [], "nothing opened at the start")
        XCTAssertNil(stage.openEncoderBitrate)
        let header = MediaPacket.sequenceHeader(.video, configuration: [], at: 0)
        let out = try run(stage, [header, try picture(at: 0, keyframe: true)], finish: true)
        XCTAssertEqual(out.first?.isSequenceHeader, true)
        XCTAssertEqual(out.first?.data.first, 1, "an avcC")
        XCTAssertEqual(out.first?.data, stage.decoderConfiguration)
        XCTAssertEqual(out.dropFirst().first?.isKeyframe, true)
    }

    func testACopiedPacketAfterPicturesComesAfterTheirEncodeAndTheNextPictureIsAKeyframe() throws {
        let stage = try makeStage()
        XCTAssertEqual(stage.trackInfo.decoderConfiguration.first, 1, "an avcC the outputs announce")
        var packets = try (0..<10).map { try picture(at: $0, keyframe: $0 == 0) }
        let copied = MediaPacket(kind: .video, data: [0, 0, 0, 1, 0x65], dts: 10 * frame, pts: 10 * frame, importance: .key)
        packets.append(copied)
        let out = try run(stage, packets)
        XCTAssertEqual(out.count, 11, "the encoder drained before the copied packet")
        XCTAssertEqual(out.prefix(10).map(\.pts), (0..<10).map { Int64($0) * frame }, "encoded at their output times")
        XCTAssertTrue(out.prefix(10).allSatisfy { !$0.data.isEmpty && $0.picture == nil })
        XCTAssertEqual(out.prefix(10).map(\.isKeyframe), [true] + Array(repeating: false, count: 9))
        XCTAssertEqual(out.last?.data, copied.data, "the copied packet passes as it is, last")

        // Pictures again (not marked): a fresh encoder, on a keyframe; finish drains it.
        let after = try run(stage, (11..<16).map { try picture(at: $0) }, finish: true)
        XCTAssertEqual(after.map(\.pts), (11..<16).map { Int64($0) * frame })
        XCTAssertEqual(after.map(\.isKeyframe), [true, false, false, false, false])
    }

    func testAPictureMarkedAsAKeyframeIsEncodedAsOne() throws {
        let stage = try makeStage()
        let out = try run(stage, (0..<8).map { try picture(at: $0, keyframe: $0 == 0 || $0 == 5) }, finish: true)
        XCTAssertEqual(out.count, 8)
        XCTAssertEqual(out.filter(\.isKeyframe).map(\.pts), [0, 5 * frame], "the input's first and the one asked for")
    }

    /// A cue's splice asks for a keyframe: the first picture at or after it (within half a
    /// frame) is one, once; a request already passed keys the next picture.
    func testASpliceKeysTheFirstPictureAtOrAfterIt() throws {
        let stage = try makeStage()
        stage.requestKeyframe(atOrAfter: 3 * frame + frame / 3)  // nearer picture 3 than 4: picture 3 shows it
        stage.requestKeyframe(atOrAfter: 6 * frame + frame * 2 / 3)  // picture 7 is the first at or after it
        var out = try run(stage, (0..<10).map { try picture(at: $0, keyframe: $0 == 0) })
        stage.requestKeyframe(atOrAfter: 2 * frame)  // behind the pictures encoded: the next one
        out += try run(stage, (10..<12).map { try picture(at: $0) }, finish: true)
        XCTAssertEqual(out.filter(\.isKeyframe).map { $0.pts / frame }, [0, 3, 7, 10])
    }

    func testFiltersSeeTheInputsPicturesButNotTheSlates() throws {
        let counter = Counter()
        let stages = FrameStages(settings: StageSettings(filters: [counter]), mixer: AudioMixer(), report: { _ in })
        let stage = try makeStage(stages)
        _ = try run(stage, [try picture(at: 0, keyframe: true), try picture(at: 1), try picture(at: 2, shownAsIs: true)],
                    finish: true)
        XCTAssertEqual(counter.seen.withLock { $0 }, 2, "a slate shows what it was given")
        XCTAssertEqual(stages.figures.stats.filteredFrames, 2)
        stages.shutDown()
    }

    func testAdaptiveBitrateReachesAnEncoderOpenedLater() throws {
        let stage = try makeStage()
        stage.setBitrate(123_000)
        // A copied packet drains it; the next picture opens an encoder at the rate reached.
        _ = try run(stage, [try picture(at: 0, keyframe: true),
                            MediaPacket(kind: .video, data: [0, 0, 0, 1, 0x65], dts: frame, pts: frame, importance: .key),
                            try picture(at: 2)])
        XCTAssertEqual(stage.openEncoderBitrate, 123_000)
    }
}
