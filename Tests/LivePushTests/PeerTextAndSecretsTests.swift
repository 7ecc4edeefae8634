@testable import LivePush
import XCTest

/// What a log line or a terminal may show of a URL and of a peer's words.
final class PeerTextAndSecretsTests: XCTestCase {
    func testEveryQueryValueButTheHarmlessOnesIsMasked() {
        let url = "rtmp://push.example.com/live/stream?txSecret=f3a9c2b1e0&txTime=65A1B2C3&wsSecret=0123456789&sig=abcdef"
            + "&access_token=tok-123456&vhost=v.example.com&Expires=1700000000&foo=barbaz"
        let redacted = Redaction.redactURL(url)
        for secret in ["f3a9c2b1e0", "0123456789", "abcdef", "tok-123456", "barbaz"] {
            XCTAssertFalse(redacted.contains(secret), "\(secret) in \(redacted)")
        }
        XCTAssertTrue(redacted.contains("txSecret=f3a9****"), redacted)
        XCTAssertTrue(redacted.contains("txTime=65A1B2C3"), redacted)
        XCTAssertTrue(redacted.contains("vhost=v.example.com"), redacted)
        XCTAssertTrue(redacted.contains("Expires=1700000000"), redacted)
    }

    func testInvalidURLErrorsNeverShowTheStreamKey() {
        for (url, key) in [("rtmp://host/app/sk-live-0123456789 space", "0123456789"), ("rtmp://host:99999/app/sk-live-0123456789", "0123456789"),
                           ("sk-live-0123456789", "0123456789"), ("ftp://host/app/sk-live-0123456789", "0123456789")] {
            XCTAssertThrowsError(try PushURL(url), url) { error in
                let error = error as? LivePushError
                XCTAssertEqual(error?.code, .invalidURL)
                XCTAssertFalse(error?.message.contains(key) ?? true, error?.message ?? "")
            }
        }
    }

    func testPeerTextIsEscapedForTerminalsAndLogs() {
        XCTAssertEqual(TerminalText.escape("Already publishing"), "Already publishing")
        XCTAssertEqual(TerminalText.escape("bad\u{1B}[2Jname"), "bad\\x1b[2Jname")
        XCTAssertEqual(TerminalText.escape("x\n[error] fake log line"), "x\\n[error] fake log line")
        XCTAssertEqual(TerminalText.escape("a\u{202E}gnp.exe"), "a\\u{202E}gnp.exe")
        XCTAssertEqual(TerminalText.escape("\u{9B}31m\u{7F}\u{0}"), "\\x9b31m\\x7f\\x00")
        XCTAssertEqual(TerminalText.escape("日本語 ok"), "日本語 ok")
        XCTAssertEqual(TerminalText.escape(String(repeating: "a", count: 600)).count, 513)
    }
}
