import XCTest
@testable import LivePush

/// HLS output URLs: `file:///dir/name.m3u8` and its options, what stays a WHIP endpoint, the
/// errors for bad values, and what logs show.
final class HLSOutputURLTests: XCTestCase {
    func testAFileURLNamesTheDirectoryAndThePlaylist() throws {
        let url = try PushURL("file:///srv/hls/ch1/index.m3u8?hls_time=2.5&hls_list_size=0")
        XCTAssertEqual(url.scheme, .file)
        XCTAssertTrue(url.isHLS)
        XCTAssertFalse(url.isWHIP)
        XCTAssertEqual(url.app, "/srv/hls/ch1")
        XCTAssertEqual(url.streamName, "index.m3u8")
        XCTAssertEqual(url.port, 0)
        let options = try XCTUnwrap(url.hlsOptions)
        XCTAssertEqual(options.targetDuration, 2_500_000)
        XCTAssertEqual(options.listSize, 0)
        XCTAssertEqual(options.segmentType, .mpegts)
        XCTAssertEqual(OutputKind(url), .hls)
        XCTAssertEqual(try PushURL("file://localhost/tmp/x/LIVE.M3U8").app, "/tmp/x")
        let defaults = try XCTUnwrap(try PushURL("file:///tmp/a.m3u8").hlsOptions)
        XCTAssertEqual(defaults.targetDuration, 2_000_000)
        XCTAssertEqual(defaults.listSize, 6)
        XCTAssertEqual(try PushURL("file:///tmp/a.m3u8").app, "/tmp")
        XCTAssertEqual(try PushURL("file:///a.m3u8").app, "/")
    }

    func testOtherHTTPURLsStayWHIPEndpoints() throws {
        let whip = try PushURL("https://whip.example.com/whip/endpoint?x=1")
        XCTAssertTrue(whip.isWHIP)
        XCTAssertFalse(whip.isHLS)
        XCTAssertEqual(OutputKind(whip), .whip)
        XCTAssertEqual(OutputKind(try PushURL("srt://h:9000")), .srt)
        XCTAssertEqual(OutputKind(try PushURL("rtmps://h/app/s")), .rtmps)
        XCTAssertTrue(OutputKind.hls.carriesSpliceSections)
        XCTAssertFalse(OutputKind.whip.carriesSpliceSections)
    }

    func testAnHTTPPlaylistURLIsAnUploadWithTheOriginsOwnQuery() throws {
        let url = try PushURL("https://origin.example.com:8443/live/ch1/index.m3u8?hls_time=1&sig=abc")
        XCTAssertTrue(url.isHLS)
        XCTAssertFalse(url.isWHIP)
        XCTAssertEqual(OutputKind(url), .hls)
        XCTAssertEqual(url.app, "/live/ch1")
        XCTAssertEqual(url.streamName, "index.m3u8")
        XCTAssertEqual(url.port, 8443)
        XCTAssertEqual(url.hlsOptions?.targetDuration, 1_000_000)
        XCTAssertEqual(url.hlsOptions?.originQuery, "sig=abc")
        XCTAssertEqual(try PushURL("http://o/index.m3u8").app, "/")
        XCTAssertThrowsError(try PushURL("https://o/live/index.m3u8?hls_tme=1")) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .invalidURL)
        }
    }

    func testATokenNeverGoesOverCleartextHTTP() throws {
        let store = HLSHTTPStore(playlist: try PushURL("http://o/live/index.m3u8"), token: "secret-token", tls: TLSOptions(),
                                 timeout: .seconds(1))
        XCTAssertThrowsError(try store.check()) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .hlsWriteFailed)
            XCTAssertFalse("\(error)".contains("secret-token"))
        }
        XCTAssertNoThrow(try HLSHTTPStore(playlist: try PushURL("http://o/live/index.m3u8"), token: nil, tls: TLSOptions(),
                                          timeout: .seconds(1)).check())
        let injected = HLSHTTPStore(playlist: try PushURL("https://o/live/index.m3u8"), token: "a\r\nX-Evil: 1", tls: TLSOptions(),
                                    timeout: .seconds(1))
        XCTAssertThrowsError(try injected.check()) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .tokenInvalid)
        }
    }

    func testBadValuesHaveTheirCodeAndASentence() {
        let invalid = [
            "file:///tmp/x/index.m3u8?hls_time=0", "file:///tmp/x/index.m3u8?hls_time=61", "file:///tmp/x/index.m3u8?hls_time=abc",
            "file:///tmp/x/index.m3u8?hls_time=nan", "file:///tmp/x/index.m3u8?hls_list_size=-1",
            "file:///tmp/x/index.m3u8?hls_list_size=2.5", "file:///tmp/x/index.m3u8?hls_segment_type=mp4",
            "file:///tmp/x/index.m3u8?hls_tiem=2", "file:///tmp/x/index.m3u8?token=abc", "file:///tmp/x/index.mpd",
            "file:///tmp/x/", "file://server/tmp/x/index.m3u8", "file:///tmp/../etc/index.m3u8", "file:///tmp/.m3u8",
        ]
        for string in invalid {
            XCTAssertThrowsError(try PushURL(string), string) { error in
                let error = error as? LivePushError
                XCTAssertEqual(error?.code, .invalidURL, string)
                XCTAssertEqual(error?.code.rawValue, 805_439_749)
                XCTAssertFalse(error?.message.isEmpty ?? true)
            }
        }
        // CMAF is written (it was refused before).
        XCTAssertEqual(try PushURL("file:///tmp/x/index.m3u8?hls_segment_type=FMP4").hlsOptions?.segmentType, .fmp4)
        XCTAssertThrowsError(try PushURL("file:///tmp/x/index.m3u8?hls_time=%1B[31m")) { error in
            XCTAssertFalse("\(error)".contains("\u{1B}"), "a value is escaped in the message")
        }
    }

    func testTheOptionsAreShownInLogsAndTheRestOfTheQueryIsNot() throws {
        let url = try PushURL("file:///srv/hls/index.m3u8?hls_time=2&hls_list_size=0")
        XCTAssertEqual(url.redacted, "file:///srv/hls/index.m3u8?hls_time=2&hls_list_size=0")
        XCTAssertEqual(try PushURL("file://localhost/a.m3u8").redacted, "file:///a.m3u8")
        XCTAssertEqual(Redaction.redactURL("https://o.example.com/l/index.m3u8?hls_time=1&sig=0123456789"),
                       "https://o.example.com/l/index.m3u8?hls_time=1&sig=0123****")
    }

    func testTheHLSCueFormsAreCueFormats() {
        XCTAssertEqual(CueFormat(rawValue: "hls"), .hls)
        XCTAssertEqual(CueFormat(rawValue: "cue-out"), .cueOut)
        XCTAssertEqual(CueFormat(rawValue: "oatcls"), .oatcls)
        XCTAssertEqual(CueFormat(rawValue: "daterange"), .dateRange)
        XCTAssertTrue(CueFormat.dateRange.isHLS)
        XCTAssertFalse(CueFormat.adCue.isHLS)
        // An RTMP output given an HLS form sends onAdCue.
        let cue = AdCue(eventID: 1, outOfNetwork: true, spliceTime: 0, duration: 1_000_000, sendAt: 0)
        XCTAssertEqual(cue.message(.dateRange), cue.message(.adCue))
    }
}
