import XCTest
@testable import LivePush

final class AuthKeyTests: XCTestCase {
    let hash = "0123456789abcdef0123456789abcdef"

    func testParsesAndRoundTrips() throws {
        let key = try AuthKey(parsing: "1700000000-477b3bbc253f467b8def6711128c7bec-0-\(hash)")
        XCTAssertEqual(key.timestamp, 1_700_000_000)
        XCTAssertEqual(key.rand, "477b3bbc253f467b8def6711128c7bec")
        XCTAssertEqual(key.uid, "0")
        XCTAssertEqual(key.hash, hash)
        XCTAssertEqual(key.rawValue, "1700000000-477b3bbc253f467b8def6711128c7bec-0-\(hash)")
        XCTAssertEqual(try AuthKey(parsing: key.rawValue), key)
        XCTAssertEqual(AuthKey(timestamp: 5, hash: hash).rawValue, "5-0-0-\(hash)")
    }

    func testRejectsMalformedValuesWithoutEchoingTheHash() {
        let bad = [
            "", "1700000000", "1700000000-0-0", "1700000000-0-0-\(hash)-1", "x1700000000-0-0-\(hash)",
            "-5-0-0-\(hash)", "1700000000-0-0-\(hash.uppercased())", "1700000000-0-0-\(hash)00",
            "1700000000-0-0-\(hash.dropLast())g", "1700000000--0-\(hash)", "1700000000-0-u%20-\(hash)",
        ]
        for value in bad {
            XCTAssertThrowsError(try AuthKey(parsing: value), value) { error in
                let error = error as? LivePushError
                XCTAssertEqual(error?.code, .invalidURL, value)
                let text = "\(String(describing: error)) \(error?.message ?? "")"
                XCTAssertFalse(text.contains(hash.prefix(8).dropFirst(4)), text)
                XCTAssertFalse(text.lowercased().contains(hash.prefix(8).dropFirst(4)), text)
            }
        }
    }

    func testDescriptionMasksTheHash() throws {
        let key = try AuthKey(parsing: "1700000000-0-0-\(hash)")
        for text in ["\(key)", String(describing: key), String(reflecting: key), dumped(key), "\([key])"] {
            XCTAssertFalse(text.contains(hash), text)
            XCTAssertFalse(text.contains("456789abcdef"), text)
        }
        XCTAssertEqual("\(key)", "1700000000-0-0-0123****")
    }

    private func dumped(_ value: some Any) -> String {
        var out = ""
        dump(value, to: &out)
        return out
    }
}
