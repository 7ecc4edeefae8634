@testable import LivePushLoopback
import XCTest

/// The `serve` publish secret (`PublishKey`) and what counts as a loopback listen address (`ListenHost`).
final class PublishKeyTests: XCTestCase {
    func testTheKeyMustBeTheKeyQueryParameter() throws {
        let key = try XCTUnwrap(PublishKey("s3cret-Key_1.~"))
        XCTAssertTrue(key.admits(rawName: "cam?key=s3cret-Key_1.~"))
        XCTAssertTrue(key.admits(rawName: "cam?vhost=x&key=s3cret-Key_1.~"))
        XCTAssertFalse(key.admits(rawName: "cam"))
        XCTAssertFalse(key.admits(rawName: "cam?key="))
        XCTAssertFalse(key.admits(rawName: "cam?key=s3cret-Key_1."), "a prefix is not the key")
        XCTAssertFalse(key.admits(rawName: "cam?key=s3cret-Key_1.~x"))
        XCTAssertFalse(key.admits(rawName: "cam?mykey=s3cret-Key_1.~"))
        XCTAssertFalse(key.admits(rawName: "s3cret-Key_1.~"), "the name itself is not the key")
    }

    func testKeysAreURLSafeAndNeverShownInFull() {
        XCTAssertNil(PublishKey(""))
        XCTAssertNil(PublishKey("with space"))
        XCTAssertNil(PublishKey("a&b"))
        XCTAssertNil(PublishKey("ключ"))
        XCTAssertEqual(PublishKey("abcdefgh")?.description, "abcd****")
        XCTAssertEqual(PublishKey("abc")?.description, "****")
    }

    func testConstantTimeComparison() {
        XCTAssertTrue(PublishKey.equalInConstantTime(Array("abc".utf8), Array("abc".utf8)))
        XCTAssertFalse(PublishKey.equalInConstantTime(Array("abc".utf8), Array("abd".utf8)))
        XCTAssertFalse(PublishKey.equalInConstantTime(Array("abc".utf8), Array("abc\u{0}".utf8)))
        XCTAssertFalse(PublishKey.equalInConstantTime([], Array("a".utf8)))
    }

    func testLoopbackHosts() {
        for host in ["127.0.0.1", "127.1.2.3", "localhost", "LOCALHOST", "::1", "[::1]", "::ffff:127.0.0.1"] {
            XCTAssertTrue(ListenHost.isLoopback(host), host)
        }
        for host in ["0.0.0.0", "::", "192.168.1.5", "10.0.0.1", "example.com", "128.0.0.1", "::2", "::ffff:10.0.0.1", ""] {
            XCTAssertFalse(ListenHost.isLoopback(host), host)
        }
    }
}
