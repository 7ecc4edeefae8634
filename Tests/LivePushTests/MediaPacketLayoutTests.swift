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
}
