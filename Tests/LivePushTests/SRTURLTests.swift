import XCTest
@testable import LivePush

final class SRTURLTests: XCTestCase {
    func testAnSRTURLTakesFFmpegsOptionsInFFmpegsUnits() throws {
        let url = try PushURL("srt://ingest.example.com:9000?mode=caller&latency=200000&passphrase=0123456789abc&pbkeylen=32&streamid=%23!::r=live/feed")
        XCTAssertEqual(url.scheme, .srt)
        XCTAssertEqual(url.host, "ingest.example.com")
        XCTAssertEqual(url.port, 9000)
        let options = try XCTUnwrap(url.srtOptions)
        XCTAssertEqual(options.mode, .caller)
        XCTAssertEqual(options.latency, 200_000, "microseconds, as FFmpeg takes them")
        XCTAssertEqual(options.passphrase, "0123456789abc")
        XCTAssertEqual(options.keyLength, 32)
        XCTAssertEqual(options.streamID, "#!::r=live/feed", "percent escapes decoded")
        XCTAssertEqual(options.payloadSize, 1316)
    }

    func testAListenerMayOmitItsHostACallerMayNot() throws {
        XCTAssertEqual(try PushURL("srt://:9000?mode=listener").srtOptions?.mode, .listener)
        XCTAssertThrowsError(try PushURL("srt://:9000")) { XCTAssertEqual(($0 as? LivePushError)?.code, .invalidURL) }
    }

    func testBadSRTURLsAreInvalidURL() {
        for bad in ["srt://host", "srt://host:9000/path", "srt://host:9000?pasphrase=0123456789ab", "srt://host:9000?passphrase=short",
                    "srt://host:9000?pbkeylen=20", "srt://host:9000?mode=sideways", "srt://host:9000?payload_size=1000",
                    "srt://host:9000?latency=soon", "srt://host:9000?transtype=file"] {
            XCTAssertThrowsError(try PushURL(bad), bad) { XCTAssertEqual(($0 as? LivePushError)?.code, .invalidURL, bad) }
        }
    }

    func testThePassphraseAndStreamIDNeverShowTheSettingsDo() throws {
        let url = try PushURL("srt://h:9000?mode=caller&latency=120000&passphrase=secret-passphrase&streamid=publish/abcdefkey")
        XCTAssertFalse(url.redacted.contains("secret-passphrase"))
        XCTAssertFalse(url.redacted.contains("abcdefkey"))
        XCTAssertTrue(url.redacted.contains("mode=caller"))
        XCTAssertTrue(url.redacted.contains("latency=120000"))
        XCTAssertThrowsError(try PushURL("srt://h:9000?passphrase=secret-passphrase&bogus=1")) { error in
            XCTAssertFalse("\(error)".contains("secret-passphrase"), "a refusal quotes no secret")
        }
    }

    /// A graceful close pads after the media for the receiver's latency and half as much again,
    /// never less than 100 ms beyond it, never more than 3 s in all.
    func testAGracefulClosePadsForTheReceiversLatencyAndHalfAgain() {
        XCTAssertEqual(SRTSession.deliveryWait(latencyMs: 120), 220_000)
        XCTAssertEqual(SRTSession.deliveryWait(latencyMs: 500), 750_000)
        XCTAssertEqual(SRTSession.deliveryWait(latencyMs: 0), 100_000)
        XCTAssertEqual(SRTSession.deliveryWait(latencyMs: 8000), 3_000_000)
    }
}
