@testable import LivePush
import XCTest

/// A packet is copied into every output's queue (1000 channels, several outputs each): the
/// ladder's variant tag must live in padding, not grow it.
final class MediaPacketLayoutTests: XCTestCase {
    func testTheVariantTagSitsInThePaddingAfterTheSequenceHeaderFlag() throws {
        let flag = try XCTUnwrap(MemoryLayout<MediaPacket>.offset(of: \.isSequenceHeader))
        let variant = try XCTUnwrap(MemoryLayout<MediaPacket>.offset(of: \.variant))
        let due = try XCTUnwrap(MemoryLayout<MediaPacket>.offset(of: \.due))
        print("MediaPacketLayoutTests: size \(MemoryLayout<MediaPacket>.size), stride \(MemoryLayout<MediaPacket>.stride), "
              + "isSequenceHeader at \(flag), variant at \(variant), due at \(due)")
        XCTAssertEqual(variant, flag + 1)
        // `due` (8-byte aligned) starts where it would without the tag: nothing moved.
        XCTAssertEqual(due, (flag + 1 + 7) / 8 * 8)
        XCTAssertGreaterThan(due, variant)
    }

    /// Raw frames ride in one box (``RawMedia``): a packet without them stays small, and one
    /// with them still reads them back.
    func testRawMediaIsOneReferenceAndReadsBack() throws {
        XCTAssertLessThanOrEqual(MemoryLayout<MediaPacket>.size, 64)
        let sound = try AudioFrame(sampleRate: 48_000, channels: 2, sampleCount: 1024, timestamp: 5)
        var packet = MediaPacket.rawSound(sound)
        XCTAssertTrue(packet.isRawSound)
        XCTAssertEqual(packet.sound?.sampleCount, 1024)
        XCTAssertNil(packet.picture)
        packet.dropRawMedia()
        XCTAssertFalse(packet.isRawSound)
        let picture = try VideoFrame(width: 16, height: 16)
        var shown = MediaPacket.rawPicture(picture, duration: 40_000, keyframe: true, shownAsIs: true)
        XCTAssertTrue(shown.isRawPicture && shown.isShownAsIs)
        shown.picture = nil
        XCTAssertFalse(shown.isRawPicture)
        XCTAssertTrue(shown.isShownAsIs, "clearing the picture keeps the flag")
    }
}
