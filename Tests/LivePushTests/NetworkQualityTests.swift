import XCTest
@testable import LivePush

final class NetworkQualityTests: XCTestCase {
    func testTheWorstOfLossRoundTripAndJitterRatesTheLink() {
        XCTAssertEqual(NetworkQuality.rate(fractionLost: 0, roundTrip: 0.02, jitter: 0.005), .excellent)
        XCTAssertEqual(NetworkQuality.rate(fractionLost: 0.02, roundTrip: 0.02, jitter: 0.005), .good)
        XCTAssertEqual(NetworkQuality.rate(fractionLost: 0, roundTrip: 0.3, jitter: 0.005), .poor)
        XCTAssertEqual(NetworkQuality.rate(fractionLost: 0, roundTrip: 0.02, jitter: 0.2), .bad)
        XCTAssertEqual(NetworkQuality.rate(fractionLost: 0.35, roundTrip: 0.02, jitter: 0.005), .bad)
        XCTAssertLessThan(NetworkQuality.good, .poor)
    }

    func testANewRatingCountsOnceTwoReportsSayIt() {
        var rater = NetworkQualityRater()
        XCTAssertEqual(rater.report(fractionLost: 0, roundTrip: 0.01, jitter: 0, now: 1_000_000), .excellent, "the first rating at once")
        XCTAssertNil(rater.report(fractionLost: 0.3, roundTrip: 0.01, jitter: 0, now: 2_000_000), "one lossy report is not enough")
        XCTAssertNil(rater.report(fractionLost: 0, roundTrip: 0.01, jitter: 0, now: 3_000_000), "and it is forgotten")
        XCTAssertNil(rater.report(fractionLost: 0.3, roundTrip: 0.01, jitter: 0, now: 4_000_000))
        XCTAssertEqual(rater.report(fractionLost: 0.3, roundTrip: 0.01, jitter: 0, now: 5_000_000), .bad)
        XCTAssertNil(rater.report(fractionLost: 0.3, roundTrip: 0.01, jitter: 0, now: 6_000_000), "no change, no report")
    }

    func testFiveSecondsWithoutAReportIsDown() {
        var rater = NetworkQualityRater()
        _ = rater.report(fractionLost: 0, roundTrip: 0.01, jitter: 0, now: 1_000_000)
        XCTAssertNil(rater.noReport(now: 4_000_000, since: 0))
        XCTAssertEqual(rater.noReport(now: 6_000_000, since: 0), .down)
    }

    func testAJWTsExpIsTheTokensExpiry() {
        func part(_ json: String) -> String {
            Data(json.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        let jwt = part(#"{"alg":"HS256"}"#) + "." + part(#"{"sub":"a?b>","exp":1900000000}"#) + ".sig"
        XCTAssertEqual(PushTokenExpiry.jwt.expiry(of: jwt), 1_900_000_000)
        XCTAssertEqual(PushTokenExpiry.jwtOrExpiryPrefix.expiry(of: jwt), 1_900_000_000)
        XCTAssertEqual(PushTokenExpiry.jwtOrExpiryPrefix.expiry(of: "1700000000-abc"), 1_700_000_000)
        XCTAssertNil(PushTokenExpiry.jwt.expiry(of: "not.a.jwt"))
        var watcher = AuthExpiryWatcher()
        watcher.watch(bearerToken: jwt)
        XCTAssertEqual(watcher.tokenExpiresAt, 1_900_000_000)
        XCTAssertEqual(watcher.poll(now: 1_899_999_960), [], "not yet")
        XCTAssertEqual(watcher.poll(now: 1_899_999_970), [.tokenWillExpire(expiresAt: 1_900_000_000)], "30 s ahead")
    }

    func testLinkServersBecomeWebrtcbinURIs() {
        XCTAssertEqual(ICEServer(url: "stun:stun.example.net:3478").webrtcbinURI, "stun://stun.example.net:3478")
        XCTAssertEqual(ICEServer(url: "turn:turn.example.net:3478?transport=udp", username: "u ser", credential: "p@ss").webrtcbinURI,
                       "turn://u%20ser:p%40ss@turn.example.net:3478")
        XCTAssertNil(ICEServer(url: "http://example.net").webrtcbinURI)
    }
}
