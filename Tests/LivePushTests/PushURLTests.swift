import XCTest
@testable import LivePush

final class PushURLTests: XCTestCase {
    func testParsesHostPortAppStreamAndQuery() throws {
        let url = try PushURL("rtmp://live.example.com:1936/app/stream?auth_key=1700000000-0-0-abcdef")
        XCTAssertEqual(url.scheme, .rtmp)
        XCTAssertEqual(url.host, "live.example.com")
        XCTAssertEqual(url.port, 1936)
        XCTAssertEqual(url.app, "app")
        XCTAssertEqual(url.streamName, "stream")
        XCTAssertEqual(url.query, "auth_key=1700000000-0-0-abcdef")
        XCTAssertEqual(url.signedPath, "/app/stream")
    }

    func testDefaultPortsAndNestedApp() throws {
        XCTAssertEqual(try PushURL("rtmp://127.0.0.1/live/s").port, 1935)
        let secure = try PushURL("rtmps://h/app/inst/s")
        XCTAssertEqual(secure.port, 443)
        XCTAssertEqual(secure.app, "app/inst")
        XCTAssertEqual(secure.streamName, "s")
        XCTAssertEqual(try PushURL("rtmp://[::1]:1940/live/s").host, "::1")
    }

    func testRejectsIllegalURLsWithInvalidURLCode() {
        let bad = [
            "rtmp://bad host/app/stream", "rtmp://host/app", "rtmp://host/", "rtmp://host",
            "ftp://host/app/stream", "host/app/stream", "rtmp:///app/stream", "rtmp://host:0/app/s",
            "rtmp://host:99999/app/s", "rtmp://ho$t/app/s", "",
        ]
        for string in bad {
            XCTAssertThrowsError(try PushURL(string), string) { error in
                XCTAssertEqual((error as? LivePushError)?.code, .invalidURL, string)
            }
        }
    }

    func testInvalidURLErrorDoesNotLeakAuthKey() {
        XCTAssertThrowsError(try PushURL("rtmp://bad host/app/s?auth_key=1700000000-0-0-0123456789abcdef")) { error in
            let text = "\(error)"
            XCTAssertFalse(text.contains("0123456789abcdef"), text)
        }
    }

    func testRedactionMasksSecretsAndKeepsTheRest() {
        // Every value is masked but the harmless ones (an allow-list: `a` could be a secret too).
        let redacted = Redaction.redactURL("rtmp://u:pw@h/app/s?a=1&auth_key=1700000000-0-0-0123456789abcdef&token=secrettoken&vhost=v")
        XCTAssertEqual(redacted, "rtmp://****@h/app/s?a=****&auth_key=1700****&token=secr****&vhost=v")
        XCTAssertEqual(Redaction.redactURL("rtmp://h/app/s"), "rtmp://h/app/s")
    }

    /// A stream name is often the stream key (YouTube, Twitch): what events, errors and logs
    /// show of a push URL keeps only its first 4 characters.
    func testAPushURLIsShownWithoutItsStreamKey() throws {
        let url = try PushURL("rtmp://a.rtmp.youtube.com/live2/abcd-efgh-ijkl-mnop")
        XCTAssertEqual(url.redacted, "rtmp://a.rtmp.youtube.com/live2/abcd****")
        XCTAssertEqual("\(url)", url.redacted)
        var dumped = ""
        dump(url, to: &dumped)
        XCTAssertFalse(dumped.contains("efgh"), dumped)
    }
}
