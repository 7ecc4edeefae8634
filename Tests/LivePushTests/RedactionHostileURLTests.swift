@testable import LivePush
import XCTest

/// Redaction parses a URL (the authority ends at the first `/`, `?` or `#`) instead of taking
/// the first `@` for the end of a user-info: `srt://h:1?streamid=alice@example.com&passphrase=…`
/// was once shown as `srt://****@example.com&passphrase=<the passphrase>`.
final class RedactionHostileURLTests: XCTestCase {
    private let passphrase = "Pz7-very-secret-passphrase"

    func testAnAtInAnSRTQueryIsNoUserInfo() {
        let url = "srt://127.0.0.1:9000?streamid=alice@example.com&passphrase=\(passphrase)&latency=200000&mode=caller"
        let expected = "srt://127.0.0.1:9000?streamid=alic****&passphrase=****&latency=200000&mode=caller"
        XCTAssertEqual(Redaction.redactURL(url), expected)
        XCTAssertEqual(Redaction.redactStreamKey(url), expected)
        XCTAssertEqual((try? PushURL(url))?.redacted, expected)
    }

    func testUserInfoEndsAtTheAuthoritysLastAt() {
        XCTAssertEqual(Redaction.redactStreamKey("rtmp://u:p@h/app/key"), "rtmp://****@h/app/****")
        XCTAssertEqual(Redaction.redactStreamKey("rtmp://a@b@c:pw@host/app/streamkey"), "rtmp://****@host/app/stre****")
        XCTAssertEqual(Redaction.redactURL("rtmp://u%40x:p%40ss@h:1935/app/s"), "rtmp://****@h:1935/app/s")
        XCTAssertEqual(Redaction.redactURL("rtmp://@h/app/s"), "rtmp://****@h/app/s")
    }

    func testAnAtInTheQueryThePathOrTheFragment() {
        XCTAssertEqual(Redaction.redactStreamKey("rtmp://h/app/streamkey1?token=x@y&vhost=v"), "rtmp://h/app/stre****?token=****&vhost=v")
        XCTAssertEqual(Redaction.redactStreamKey("rtmp://h/app/streamkey1#u@fragmentsecret"), "rtmp://****/app/stre****#****")
        // A "/" in a password splits the user-info: what looks like a host and the segment with the "@" are masked.
        XCTAssertEqual(Redaction.redactURL("rtmp://u:1234/pass@h/app/s"), "rtmp://****/****/app/s")
        XCTAssertEqual(Redaction.redactURL("rtmp://u:1234?pass@h/app/s"), "rtmp://****?****")
        // A "?" in a password: what is left of the authority is no host and is masked.
        XCTAssertEqual(Redaction.redactURL("rtmp://u:secretpw?x@h/app"), "rtmp://****?****")
    }

    func testPercentEncodingHidesNoSecret() {
        XCTAssertEqual(Redaction.redactURL("srt://h:9000?pass%70hrase=\(passphrase)"), "srt://h:9000?pass****")
        // An encoded harmless name is no longer known to be harmless.
        XCTAssertEqual(Redaction.redactURL("srt://h:9000?m%6Fde=caller"), "srt://h:9000?m%6F****")
        XCTAssertEqual(Redaction.redactURL("srt://h:9000?streamid=a%40b%26passphrase%3D\(passphrase)"), "srt://h:9000?streamid=a%40****")
        // A harmless name with a value that is no setting is masked.
        XCTAssertEqual(Redaction.redactURL("srt://h:9000?mode=caller;passphrase=\(passphrase)"), "srt://h:9000?mode=call****")
    }

    func testStringsWithoutAScheme() {
        XCTAssertEqual(Redaction.redactStreamKey("user:TopSecret@host/app/streamkey"), "****@host/app/stre****")
        XCTAssertEqual(Redaction.redactStreamKey("alice@example.com"), "****@example.com")
        XCTAssertEqual(Redaction.redactStreamKey("sk-live-0123456789"), "sk-l****")
        XCTAssertEqual(Redaction.redactStreamKey("host:1935/app/streamkey"), "host:1935/app/stre****")
        XCTAssertEqual(Redaction.redactStreamKey("host:TopSecret/app/streamkey"), "****/app/stre****")
        XCTAssertEqual(Redaction.redactStreamKey("//u:pw@h/app/key"), "//****@h/app/****")
        XCTAssertEqual(Redaction.redactStreamKey("1rtmp://u:pw@h/app/key"), "1rtmp://****@h/app/****")
    }

    func testIPv6Hosts() {
        XCTAssertEqual(Redaction.redactURL("srt://[::1]:9000?passphrase=\(passphrase)&latency=200"), "srt://[::1]:9000?passphrase=****&latency=200")
        XCTAssertEqual(Redaction.redactStreamKey("rtmp://user:pw@[2001:db8::1]:1935/app/streamkey"), "rtmp://****@[2001:db8::1]:1935/app/stre****")
        XCTAssertEqual(Redaction.redactURL("srt://[fe80::1%25eth0]:9000"), "srt://[fe80::1%25eth0]:9000")
        XCTAssertEqual(Redaction.redactURL("rtmp://[::1/app/s"), "rtmp://****/app/s")
    }

    /// SRT's access-control stream id starts with `#`, where a URL's fragment begins.
    func testAnSRTAccessControlStreamID() {
        let url = "srt://h:9000?streamid=#!::r=live/feed,u=alice,m=publish&passphrase=\(passphrase)"
        XCTAssertEqual(Redaction.redactStreamKey(url), "srt://h:9000?streamid=#!::r****&passphrase=****")
        XCTAssertEqual(Redaction.redactURL("srt://h:9000?streamid=%23!::r=live,u=alice"), "srt://h:9000?streamid=%23!****")
    }

    func testOddInputsNeitherTrapNorLeak() {
        let secret = "Zq9xW4-hidden-value-77"
        for odd in ["", "://", "@", "?", "#", "&", "=", "rtmp://", "rtmp://@", "rtmp://[", "rtmp://]", "a://b@c?d@e#f@g", "%%%", "%", "?=&=#=",
                    "rtmp://ホスト/アプリ/キー", "\u{0}\u{1B}[2J", "srt://:9000?mode=listener", String(repeating: "@/?#&=", count: 200)] {
            _ = Redaction.redactURL(odd)
            _ = Redaction.redactStreamKey(odd)
        }
        let schemes = ["srt://", "rtmp://", "", "//", "x?y://", "1a://", "RTMPS://"]
        let users = ["", "u:\(secret)@", "a@b@\(secret)@", "@"]
        let hosts = ["h:1", "[::1]:2", "alice@example.com", "", "[::1", "h:\(secret)"]
        let paths = ["", "/app/\(secret)", "/a@\(secret)/app/k", "/app/\(secret)/"]
        let queries = ["", "?passphrase=\(secret)", "?streamid=a@b&passphrase=\(secret)", "?mode=caller&passphrase=\(secret)#x@y",
                       "?streamid=#!::u=a,r=b&passphrase=\(secret)", "?\(secret)", "?mode=\(secret)@", "#token=\(secret)", "?a=1#\(secret)"]
        for scheme in schemes {
            for user in users {
                for host in hosts {
                    for path in paths {
                        for query in queries {
                            let url = scheme + user + host + path + query
                            guard url.contains(secret) else { continue }
                            let redacted = Redaction.redactStreamKey(url)
                            XCTAssertFalse(redacted.contains(secret.dropFirst(4).prefix(8)), "\(url) -> \(redacted)")
                        }
                    }
                }
            }
        }
    }

    /// A server's reason is text, not a URL: its words stay (the reconnect logic reads "Already
    /// publishing" in it), and only what quotes a URL, a query or a user-info is masked.
    func testAServersReasonKeepsItsWordsAndLosesItsSecrets() {
        XCTAssertEqual(Redaction.redactText("NetStream.Publish.BadName: Already publishing"),
                       "NetStream.Publish.BadName: Already publishing")
        let quoted = Redaction.redactText("rejected rtmp://h/live/stream?auth_key=1700000000-0-0-deadbeefdeadbeef now")
        XCTAssertTrue(quoted.hasPrefix("rejected rtmp://h/live/stre****?auth_key="), quoted)
        XCTAssertTrue(quoted.hasSuffix(" now"), quoted)
        XCTAssertFalse(quoted.contains("deadbeefdeadbeef"), quoted)
        XCTAssertFalse(Redaction.redactText("bad key=supersecretvalue for alice@example.com").contains("supersecret"))
        XCTAssertFalse(Redaction.redactText("user alice:pw123456@host").contains("pw123456"))
    }
}
