import XCTest
@testable import LivePush

/// The URLs an HLS input reads: parsed and bounded, and a playlist's references resolved
/// against it as RFC 3986 §5.2 says.
final class HLSURLTests: XCTestCase {
    func testParsing() throws {
        let url = try HLSURL("https://cdn.example.com:8443/live/ch1/index.m3u8?token=abc#frag")
        XCTAssertTrue(url.secure)
        XCTAssertEqual(url.host, "cdn.example.com")
        XCTAssertEqual(url.port, 8443)
        XCTAssertEqual(url.target, "/live/ch1/index.m3u8?token=abc")
        XCTAssertEqual(url.authority, "cdn.example.com:8443")
        XCTAssertEqual(try HLSURL("http://127.0.0.1/live.m3u8").port, 80)
        XCTAssertEqual(try HLSURL("http://[::1]:8080/a.m3u8").host, "::1")
        XCTAssertEqual(try HLSURL("http://[::1]:8080/a.m3u8").authority, "[::1]:8080")
        XCTAssertEqual(try HLSURL("http://h").target, "/")
        XCTAssertEqual(try HLSURL("http://h/x.m3u8").connectionURL().host, "h")
        for bad in ["ftp://h/a.m3u8", "http:///a.m3u8", "http://h:0/a", "http://h:99999/a", "http://h a/b", "http://[::1/a",
                    "http://h\u{1B}/a", "http://" + String(repeating: "a", count: 9000), "http://exa$mple/a"] {
            XCTAssertThrowsError(try HLSURL(bad), bad)
        }
        XCTAssertFalse(try HLSURL("http://h/live.m3u8?auth_key=secret123").description.contains("secret123"))
    }

    func testReferencesResolveAgainstThePlaylist() throws {
        let base = try HLSURL("http://origin:8080/live/ch1/index.m3u8?session=1")
        XCTAssertEqual(try base.resolve("seg5.ts").rawValue, "http://origin:8080/live/ch1/seg5.ts")
        XCTAssertEqual(try base.resolve("../ch2/seg5.ts?x=1").rawValue, "http://origin:8080/live/ch2/seg5.ts?x=1")
        XCTAssertEqual(try base.resolve("/other/seg.ts").rawValue, "http://origin:8080/other/seg.ts")
        XCTAssertEqual(try base.resolve("//cdn.example/seg.ts").rawValue, "http://cdn.example/seg.ts")
        XCTAssertEqual(try base.resolve("https://cdn.example/seg.ts").rawValue, "https://cdn.example/seg.ts")
        XCTAssertEqual(try base.resolve("?session=2").rawValue, "http://origin:8080/live/ch1/index.m3u8?session=2")
        XCTAssertEqual(try base.resolve("../../../../x.ts").rawValue, "http://origin:8080/x.ts", "never above the root")
        XCTAssertThrowsError(try base.resolve("file:///etc/passwd"))
        XCTAssertThrowsError(try base.resolve("javascript:alert(1)"))
        XCTAssertThrowsError(try base.resolve("seg 5.ts"))
    }
}
