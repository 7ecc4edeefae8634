import XCTest
@testable import LivePush

final class AuthExpiryWatcherTests: XCTestCase {
    let key = "watcher-key"
    let t0: Int64 = 1_700_000_000

    private func signed(_ expiresAt: Int64, stream: String = "s", meaning: AuthTimestampMeaning = .expiry) throws -> PushURL {
        try PushURL(try AuthKeySigner(privateKey: key, timestampMeaning: meaning).sign("rtmp://h/live/\(stream)", expiresAt: expiresAt))
    }

    /// Polls every second from `from` through `to` and records what fired when.
    private func timeline(_ watcher: inout AuthExpiryWatcher, from: Int64, to: Int64) -> [Int64: [AuthExpiryEvent]] {
        var fired: [Int64: [AuthExpiryEvent]] = [:]
        for now in from...to {
            let events = watcher.poll(now: now)
            if !events.isEmpty { fired[now] = events }
        }
        return fired
    }

    func testAuthKeyOverdueFiresOnceAtTheLeadTimeThenExpires() throws {
        let expiry = t0 + 300
        var watcher = AuthExpiryWatcher(url: try signed(expiry))
        XCTAssertEqual(watcher.authKeyExpiresAt, expiry)
        XCTAssertEqual(watcher.nextDeadline, expiry - 60)
        let fired = timeline(&watcher, from: t0, to: expiry + 100)
        XCTAssertEqual(fired, [
            expiry - 60: [.authenticationOverdue(expiresAt: expiry)],
            expiry + 1: [.authExpired(at: expiry)],
        ])
        XCTAssertNil(watcher.nextDeadline)
    }

    func testWithAManualClockNoWaiting() throws {
        let clock = ManualWallClock(now: t0)
        var watcher = AuthExpiryWatcher(url: try signed(t0 + 3600))
        XCTAssertEqual(watcher.poll(clock: clock), [])
        clock.advance(by: .seconds(3539))
        XCTAssertEqual(watcher.poll(clock: clock), [])
        clock.advance(by: .seconds(1))
        XCTAssertEqual(watcher.poll(clock: clock), [.authenticationOverdue(expiresAt: t0 + 3600)])
        XCTAssertEqual(watcher.poll(clock: clock), [])
        XCTAssertEqual(watcher.nextDeadline, t0 + 3601)
        clock.advance(by: .seconds(61))
        XCTAssertEqual(watcher.poll(clock: clock), [.authExpired(at: t0 + 3600)])
    }

    func testConfiguredLeadTimeAndIssuedAtReading() throws {
        let meaning = AuthTimestampMeaning.issuedAt(validity: .seconds(600))
        let config = AuthExpiryWatcher.Configuration(timestampMeaning: meaning, authKeyLeadTime: .seconds(120))
        var watcher = AuthExpiryWatcher(url: try signed(t0 + 600, meaning: meaning), configuration: config)
        XCTAssertEqual(watcher.authKeyExpiresAt, t0 + 600)
        let fired = timeline(&watcher, from: t0, to: t0 + 700)
        XCTAssertEqual(fired, [t0 + 480: [.authenticationOverdue(expiresAt: t0 + 600)], t0 + 601: [.authExpired(at: t0 + 600)]])
    }

    func testALatePollReportsEverythingDueInOrder() throws {
        var watcher = AuthExpiryWatcher(url: try signed(t0))
        XCTAssertEqual(watcher.poll(now: t0 + 500), [.authenticationOverdue(expiresAt: t0), .authExpired(at: t0)])
        XCTAssertEqual(watcher.poll(now: t0 + 501), [])
    }

    func testAcceptingANewURLResetsAndTheSameURLDoesNot() throws {
        let first = try signed(t0 + 100)
        var watcher = AuthExpiryWatcher(url: first)
        XCTAssertEqual(watcher.poll(now: t0 + 40), [.authenticationOverdue(expiresAt: t0 + 100)])
        watcher.accept(first)
        XCTAssertEqual(watcher.poll(now: t0 + 41), [], "same URL: not reported twice")

        // The app answered the overdue callback with a fresh URL.
        let refreshed = try signed(t0 + 3700)
        watcher.accept(refreshed)
        XCTAssertEqual(watcher.url, refreshed)
        XCTAssertEqual(watcher.nextDeadline, t0 + 3640)
        let fired = timeline(&watcher, from: t0 + 42, to: t0 + 3800)
        XCTAssertEqual(fired, [t0 + 3640: [.authenticationOverdue(expiresAt: t0 + 3700)], t0 + 3701: [.authExpired(at: t0 + 3700)]])

        XCTAssertThrowsError(try watcher.accept("not a url")) { XCTAssertEqual(($0 as? LivePushError)?.code, .invalidURL) }
        XCTAssertEqual(watcher.url, refreshed)
    }

    func testURLWithoutCredentialsIsNotWatched() throws {
        var watcher = AuthExpiryWatcher(url: try PushURL("rtmp://h/live/s?x=1&auth_key=garbage"))
        XCTAssertFalse(watcher.isWatching)
        XCTAssertNil(watcher.nextDeadline)
        XCTAssertEqual(watcher.poll(now: .max), [])
        var empty = AuthExpiryWatcher()
        XCTAssertEqual(empty.poll(now: t0), [])
    }

    func testTokenModeWarnsThirtySecondsBefore() throws {
        let expiry = t0 + 200
        var watcher = AuthExpiryWatcher(url: try PushURL("rtmp://h/live/s?token=\(expiry)-opaque&x=1"))
        XCTAssertNil(watcher.authKeyExpiresAt)
        XCTAssertEqual(watcher.tokenExpiresAt, expiry)
        let fired = timeline(&watcher, from: t0, to: expiry + 10)
        XCTAssertEqual(fired, [expiry - 30: [.tokenWillExpire(expiresAt: expiry)], expiry + 1: [.tokenExpired(at: expiry)]])

        // refreshPushURLToken(_:): the token is replaced, the rest of the URL kept.
        let current = try XCTUnwrap(watcher.url)
        let refreshed = PushToken.replacing(in: current, with: "\(expiry + 600)-new")
        XCTAssertEqual(refreshed, "rtmp://h/live/s?token=\(expiry + 600)-new&x=1")
        try watcher.accept(refreshed)
        XCTAssertEqual(watcher.nextDeadline, expiry + 570)
    }

    func testCustomTokenExtractorAndParameter() throws {
        let config = AuthExpiryWatcher.Configuration(
            tokenLeadTime: .seconds(10), tokenParameter: "txSecret",
            tokenExpiry: PushTokenExpiry { token in token.hasPrefix("exp") ? Int64(token.dropFirst(3)) : nil })
        var watcher = AuthExpiryWatcher(url: try PushURL("rtmp://h/live/s?txSecret=exp\(t0 + 50)"), configuration: config)
        XCTAssertEqual(watcher.tokenExpiresAt, t0 + 50)
        XCTAssertEqual(watcher.poll(now: t0 + 40), [.tokenWillExpire(expiresAt: t0 + 50)])
        XCTAssertNil(PushTokenExpiry.expiryPrefix.expiry(of: "abc"))
        XCTAssertNil(PushTokenExpiry.expiryPrefix.expiry(of: "1700000000"))
        XCTAssertNil(PushTokenExpiry.expiryPrefix.expiry(of: "-x"))
        XCTAssertEqual(PushTokenExpiry.expiryPrefix.expiry(of: "1700000000-a-b"), 1_700_000_000)
    }

    func testAuthKeyAndTokenTogether() throws {
        let url = PushURLQuery.setting("token", to: "\(t0 + 100)-t", inURL: try signed(t0 + 200).rawValue)
        var watcher = AuthExpiryWatcher(url: try PushURL(url))
        XCTAssertEqual(watcher.poll(now: t0 + 300), [
            .tokenWillExpire(expiresAt: t0 + 100), .tokenExpired(at: t0 + 100),
            .authenticationOverdue(expiresAt: t0 + 200), .authExpired(at: t0 + 200),
        ])
    }

    func testEventErrorsAndNames() {
        XCTAssertEqual(AuthExpiryEvent.authExpired(at: t0).error?.code, .authExpired)
        XCTAssertEqual(AuthExpiryEvent.tokenExpired(at: t0).error?.code, .authExpired)
        XCTAssertNil(AuthExpiryEvent.authenticationOverdue(expiresAt: t0).error)
        XCTAssertEqual(AuthExpiryEvent.authenticationOverdue(expiresAt: t0).name, "pushURLAuthenticationOverdue")
        XCTAssertEqual("\(AuthExpiryEvent.tokenWillExpire(expiresAt: t0))", "tokenWillExpire (token expires 2023-11-14 22:13:20 UTC)")
    }
}
