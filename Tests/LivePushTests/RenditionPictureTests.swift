@testable import LivePush
import XCTest

/// A second rendition from a transcoded input never decodes an encode: the input's encoder
/// hands each packet the picture it was encoded from (``PicturesAwaitingEncode``), and the
/// rendition stage takes it, decoding only packets that came without one
/// (``RenditionPictureSource``).
final class RenditionPictureTests: XCTestCase {
    // MARK: - Matching encoder output to its pictures

    func testPacketsTakeTheirPicturesAfterTheEncodersDelay() {
        var awaiting = PicturesAwaitingEncode<String>(capacity: 4)
        // Three frames in before the first packet comes out (frame threads).
        awaiting.add("a", at: 0)
        awaiting.add("b", at: 40_000)
        awaiting.add("c", at: 80_000)
        XCTAssertEqual(awaiting.take(at: 0), "a")
        awaiting.add("d", at: 120_000)
        XCTAssertEqual(awaiting.take(at: 40_000), "b")
        XCTAssertEqual(awaiting.take(at: 80_000), "c")
        XCTAssertEqual(awaiting.take(at: 120_000), "d")
        XCTAssertEqual(awaiting.count, 0)
        XCTAssertEqual(awaiting.unmatched, 0)
    }

    func testAPictureNeverEncodedIsLetGoAndCounted() {
        var awaiting = PicturesAwaitingEncode<String>(capacity: 4)
        awaiting.add("a", at: 0)
        awaiting.add("b", at: 40_000)
        awaiting.add("c", at: 80_000)
        XCTAssertEqual(awaiting.take(at: 80_000), "c", "the encoder dropped a and b")
        XCTAssertEqual(awaiting.unmatched, 2)
        XCTAssertNil(awaiting.take(at: 120_000), "a packet with no picture waiting gets none")
        XCTAssertEqual(awaiting.unmatched, 2)
    }

    func testTheMapIsBounded() {
        var awaiting = PicturesAwaitingEncode<Int>(capacity: 4)
        for i in 0..<10 { awaiting.add(i, at: Int64(i) * 40_000) }
        XCTAssertEqual(awaiting.count, 4, "an encoder that returns nothing cannot make pictures pile up")
        XCTAssertEqual(awaiting.unmatched, 6)
        XCTAssertNil(awaiting.take(at: 0), "the oldest went")
        XCTAssertEqual(awaiting.take(at: 6 * 40_000), 6)
    }

    func testATimelineThatGoesBackOrAnEncoderReplacedLeavesNothingToMatch() {
        var awaiting = PicturesAwaitingEncode<Int>(capacity: 8)
        awaiting.add(1, at: 1_000_000)
        awaiting.add(2, at: 1_040_000)
        awaiting.add(0, at: 0)  // a loop's first frame, encoder restarted
        XCTAssertEqual(awaiting.unmatched, 2)
        XCTAssertEqual(awaiting.take(at: 0), 0)
        awaiting.add(3, at: 40_000)
        awaiting.discardAll()
        XCTAssertEqual(awaiting.unmatched, 3)
        XCTAssertEqual(awaiting.count, 0)
    }

    /// libx264 with frame threads, as an input encodes: every packet carries the picture it was
    /// encoded from (same time, the encoder's size), none is left over.
    func testARealEncoderHandsEveryPacketItsPicture() throws {
        let settings = try VideoEncoderSettings(width: 320, height: 180, frameRate: 25, options: MediaSourceOptions())
        let encoder = try VideoFrameEncoder(settings: settings, keepsPictures: true)
        var packets: [MediaPacket] = []
        for i in 0..<50 {
            // 640x360 in: the picture kept is the scaled one the encoder took.
            try encoder.encode(VideoFrame(width: 640, height: 360, timestamp: Int64(i) * 40_000), into: &packets)
        }
        try encoder.finish(into: &packets)
        XCTAssertEqual(packets.count, 50)
        for packet in packets {
            let picture = try XCTUnwrap(packet.picture, "packet at \(packet.pts)")
            XCTAssertEqual(picture.timestamp, packet.pts)
            XCTAssertEqual([picture.width, picture.height], [320, 180])
        }
        XCTAssertEqual(packets.map(\.pts), (0..<50).map { Int64($0) * 40_000 })
        XCTAssertEqual(encoder.picturesUnmatched, 0)

        let plain = try VideoFrameEncoder(settings: settings)
        var out: [MediaPacket] = []
        for i in 0..<5 { try plain.encode(VideoFrame(width: 320, height: 180, timestamp: Int64(i) * 40_000), into: &out) }
        try plain.finish(into: &out)
        XCTAssertTrue(out.allSatisfy { $0.picture == nil }, "without renditions no picture is kept")
    }

    // MARK: - Picture or decode, packet by packet

    func testCarriedPicturesAreTakenAndTheDecoderIsUsedOnlyForPacketsWithout() {
        var source = RenditionPictureSource()
        XCTAssertEqual(source.next(hasPicture: true, isKeyframe: true), .takePicture(drainDecoderFirst: false))
        XCTAssertEqual(source.next(hasPicture: true, isKeyframe: false), .takePicture(drainDecoderFirst: false))
        // A slate encoded elsewhere: it starts on a keyframe, so it decodes.
        XCTAssertEqual(source.next(hasPicture: false, isKeyframe: true), .decode)
        XCTAssertEqual(source.next(hasPicture: false, isKeyframe: false), .decode)
        // Back to pictures: the decoder's last pictures go first, then it starts over.
        XCTAssertEqual(source.next(hasPicture: true, isKeyframe: true), .takePicture(drainDecoderFirst: true))
        XCTAssertEqual(source.next(hasPicture: true, isKeyframe: false), .takePicture(drainDecoderFirst: false))
        XCTAssertFalse(source.decoderFed)
    }

    func testAPacketWithoutPictureOutsideADecodedGOPIsSkippedUntilAKeyframe() {
        var source = RenditionPictureSource()
        XCTAssertEqual(source.next(hasPicture: true, isKeyframe: true), .takePicture(drainDecoderFirst: false))
        // A picture missed mid-GOP: the decoder never saw that GOP's keyframe.
        XCTAssertEqual(source.next(hasPicture: false, isKeyframe: false), .skip)
        XCTAssertEqual(source.next(hasPicture: false, isKeyframe: false), .skip)
        XCTAssertEqual(source.next(hasPicture: false, isKeyframe: true), .decode)
        XCTAssertEqual(source.next(hasPicture: false, isKeyframe: false), .decode)
        // A new configuration opens a new decoder: it needs a keyframe again.
        source.decoderReopened()
        XCTAssertEqual(source.next(hasPicture: false, isKeyframe: false), .skip)
    }
}
