import XCTest
@testable import LivePush

final class LivePushErrorTests: XCTestCase {
    func testCodesAreUniqueAndKeepTheReferenceNumbers() {
        let codes = LivePushError.Code.allCases.map(\.rawValue)
        XCTAssertEqual(Set(codes).count, codes.count)
        XCTAssertEqual(LivePushError.Code.invalidState.rawValue, 805_439_745)
        XCTAssertEqual(LivePushError.Code.connectFailed.rawValue, 805_439_747)
        XCTAssertEqual(LivePushError.Code.invalidURL.rawValue, 805_439_749)
        XCTAssertEqual(LivePushError.Code.reconnectFailed.rawValue, 805_439_750)
        XCTAssertEqual(LivePushError.Code.sendDataTimeout.rawValue, 805_439_751)
        XCTAssertEqual(LivePushError.Code.lowPerformance.rawValue, 805_438_211)
        XCTAssertEqual(LivePushError.Code.videoInputOpenFailed.rawValue, 268_455_939)
        XCTAssertEqual(LivePushError.Code.bgmOpenFailed.hex, "0x30010501")
        XCTAssertEqual(LivePushError.Code.tlsVerificationFailed.rawValue, 805_439_760)
        XCTAssertEqual(LivePushError.Code.tlsVerificationFailed.hex, "0x30020910")
    }

    func testEveryCodeHasASentence() {
        for code in LivePushError.Code.allCases {
            XCTAssertTrue(code.sentence.hasSuffix("."), "\(code)")
            XCTAssertGreaterThan(code.sentence.count, 10)
        }
        let error = LivePushError(.fileNotFound, "/nope.mp4")
        XCTAssertEqual(error.message, "The media file does not exist or cannot be read. (/nope.mp4)")
        XCTAssertTrue(error.description.contains("0x30030101"))
    }
}
