import LivePushWire
import XCTest

final class WireAMF0Tests: XCTestCase {
    func testKnownByteVectors() {
        XCTAssertEqual(AMF0.encode([.number(1.0)]), [0x00, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(AMF0.encode([.string("a")]), [0x02, 0x00, 0x01, 0x61])
        XCTAssertEqual(AMF0.encode([.boolean(true)]), [0x01, 0x01])
        XCTAssertEqual(AMF0.encode([.boolean(false)]), [0x01, 0x00])
        XCTAssertEqual(AMF0.encode([.null]), [0x05])
        XCTAssertEqual(AMF0.encode([.undefined]), [0x06])
        XCTAssertEqual(AMF0.encode([.object([])]), [0x03, 0x00, 0x00, 0x09])
        XCTAssertEqual(
            AMF0.encode([.object([AMF0Property("a", .number(0))])]),
            [0x03, 0x00, 0x01, 0x61, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x00, 0x09])
        XCTAssertEqual(
            AMF0.encode([.ecmaArray([AMF0Property("b", .boolean(true))])]),
            [0x08, 0, 0, 0, 1, 0x00, 0x01, 0x62, 0x01, 0x01, 0x00, 0x00, 0x09])
        XCTAssertEqual(
            AMF0.encode([.strictArray([.null, .string("")])]),
            [0x0A, 0, 0, 0, 2, 0x05, 0x02, 0x00, 0x00])
        XCTAssertEqual(AMF0.encode([.date(0)]), [0x0B, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    }

    func testConnectCommandVector() throws {
        // "connect", 1, {app: "live"} as sent by RTMP clients.
        let bytes: [UInt8] =
            [0x02, 0x00, 0x07] + Array("connect".utf8)
            + [0x00, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0]
            + [0x03, 0x00, 0x03] + Array("app".utf8) + [0x02, 0x00, 0x04] + Array("live".utf8) + [0x00, 0x00, 0x09]
        let values = try AMF0.decode(bytes)
        XCTAssertEqual(values, [.string("connect"), .number(1), .object([AMF0Property("app", .string("live"))])])
        XCTAssertEqual(values[2]["app"], .string("live"))
        XCTAssertEqual(AMF0.encode(values), bytes)
    }

    func testRoundTrip() throws {
        let values: [AMF0Value] = [
            .string("onMetaData"),
            .number(-123.456),
            .number(.infinity),
            .boolean(true),
            .null,
            .undefined,
            .date(1_700_000_000_000),
            .object([
                AMF0Property("nested", .object([AMF0Property("x", .strictArray([.number(1), .string("é✓")]))])),
                AMF0Property("", .string("empty key is not the end marker")),
            ]),
            .ecmaArray([AMF0Property("width", .number(320)), AMF0Property("height", .number(240))]),
            .strictArray([]),
        ]
        XCTAssertEqual(try AMF0.decode(AMF0.encode(values)), values)
    }

    func testLongString() throws {
        let long = String(repeating: "x", count: 70_000)
        let bytes = AMF0.encode([.string(long)])
        XCTAssertEqual(bytes[0], 0x0C)
        XCTAssertEqual(Array(bytes[1..<5]), [0x00, 0x01, 0x11, 0x70])
        XCTAssertEqual(bytes.count, 5 + 70_000)
        XCTAssertEqual(try AMF0.decode(bytes), [.string(long)])
    }

    func testDecodeFromSlice() throws {
        let bytes: [UInt8] = [0xFF, 0x02, 0x00, 0x01, 0x61]
        XCTAssertEqual(try AMF0.decode(bytes[1...]), [.string("a")])
    }

    func testTypedObjectAndXMLDecode() throws {
        let typed: [UInt8] = [0x10, 0x00, 0x01, 0x43, 0x00, 0x01, 0x6B, 0x05, 0x00, 0x00, 0x09]
        XCTAssertEqual(try AMF0.decode(typed), [.object([AMF0Property("k", .null)])])
        let xml: [UInt8] = [0x0F, 0, 0, 0, 2, 0x3C, 0x3E]
        XCTAssertEqual(try AMF0.decode(xml), [.string("<>")])
    }

    func testErrors() {
        XCTAssertThrowsError(try AMF0.decode([0x00, 0x3F])) { error in
            XCTAssertEqual((error as? AMF0Error)?.kind, .truncated)
        }
        XCTAssertThrowsError(try AMF0.decode([0x02, 0x00, 0x05, 0x61])) { error in
            XCTAssertEqual((error as? AMF0Error)?.kind, .truncated)
        }
        XCTAssertThrowsError(try AMF0.decode([0x05, 0x42])) { error in
            XCTAssertEqual(error as? AMF0Error, AMF0Error(.unknownMarker(0x42), offset: 1))
            XCTAssertTrue("\(error)".contains("0x42"))
        }
        XCTAssertThrowsError(try AMF0.decode([0x11, 0x01])) { error in
            XCTAssertEqual((error as? AMF0Error)?.kind, .unsupportedMarker(0x11))
        }
        XCTAssertThrowsError(try AMF0.decode([0x02, 0x00, 0x01, 0xFF])) { error in
            XCTAssertEqual((error as? AMF0Error)?.kind, .invalidUTF8)
        }
        XCTAssertThrowsError(try AMF0.decode([0x0A, 0xFF, 0xFF, 0xFF, 0xFF])) { error in
            XCTAssertEqual((error as? AMF0Error)?.kind, .truncated)
        }
        // Deep nesting is bounded.
        var deep: [UInt8] = []
        for _ in 0..<200 { deep += [0x0A, 0, 0, 0, 1] }
        deep.append(0x05)
        XCTAssertThrowsError(try AMF0.decode(deep)) { error in
            XCTAssertEqual((error as? AMF0Error)?.kind, .nestingTooDeep)
        }
    }

    func testObjectWithoutEndMarkerAtEndOfMessage() throws {
        // Some encoders end a message with an empty key and no 0x09.
        let bytes: [UInt8] = [0x03, 0x00, 0x01, 0x61, 0x05, 0x00, 0x00]
        XCTAssertEqual(try AMF0.decode(bytes), [.object([AMF0Property("a", .null)])])
    }
}
