/// Decides when the current push URL's credentials need attention. Pure logic: no threads,
/// no timers, no clock of its own; the pusher calls ``poll(now:)`` from its own loop.
///
/// For the URL it was last given it watches the `auth_key` (expiry read with
/// ``Configuration/timestampMeaning``) and/or the `token` (expiry read with
/// ``Configuration/tokenExpiry``), and reports, each at most once per URL:
///
/// | credential | at `expiry - lead time` | at `expiry` (then expired) |
/// |---|---|---|
/// | auth_key | ``AuthExpiryEvent/authenticationOverdue(expiresAt:)`` (lead 60 s) | ``AuthExpiryEvent/authExpired(at:)`` |
/// | token | ``AuthExpiryEvent/tokenWillExpire(expiresAt:)`` (lead 30 s) | ``AuthExpiryEvent/tokenExpired(at:)`` |
///
/// The URL counts as expired once `now > expiry` (it is still valid during the expiry second,
/// as `AuthKeySigner.verify` has it). A poll that comes late
/// reports every event that is due, warning first. ``accept(_:)-(PushURL)`` with a new URL starts over;
/// accepting the same URL again changes nothing, so warnings are not repeated.
///
///     var watcher = AuthExpiryWatcher(url: pushURL)
///     for event in watcher.poll(now: clock.now) { ... }    // e.g. once per second
///     watcher.accept(refreshedURL)
///
/// A value type: keep it in the pusher's lock-protected state.
package struct AuthExpiryWatcher: Sendable, CustomReflectable {
    /// What the watcher reads from a URL and how early it warns.
    package typealias Configuration = AuthExpiryOptions

    /// One credential's expiry and what has been reported about it.
    struct Deadline: Sendable, Equatable {
        var expiresAt: Int64
        var warnAt: Int64
        var warned = false
        var expired = false

        init(expiresAt: Int64, lead: Duration) {
            self.expiresAt = expiresAt
            warnAt = expiresAt.addingClamped(-max(0, lead.wholeSeconds))
        }

        /// The next second at which something is due, nil when everything was reported.
        var next: Int64? {
            if !warned { return warnAt }
            if !expired { return expiresAt.addingClamped(1) }
            return nil
        }
    }

    /// How this watcher reads expiries and how early it warns.
    package let configuration: Configuration
    /// The URL being watched (nil before the first ``accept(_:)-(PushURL)``).
    package private(set) var url: PushURL?
    private var authKey: Deadline?
    private var token: Deadline?

    /// Creates a watcher that watches no URL yet.
    package init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// A watcher already watching `url`.
    package init(url: PushURL, configuration: Configuration = Configuration()) {
        self.configuration = configuration
        accept(url)
    }

    /// When the watched URL's auth_key expires (Unix seconds); nil when it has none (or it is malformed).
    package var authKeyExpiresAt: Int64? { authKey?.expiresAt }

    /// When the watched URL's token expires (Unix seconds); nil when it has none or its expiry is unknown.
    package var tokenExpiresAt: Int64? { token?.expiresAt }

    /// True when the URL carries a credential whose expiry is known.
    package var isWatching: Bool { authKey != nil || token != nil }

    /// The Unix second at which the next event becomes due (poll then, or earlier);
    /// nil when nothing is pending. Lets a pusher sleep instead of polling every second.
    package var nextDeadline: Int64? {
        [authKey?.next, token?.next].compactMap { $0 }.min()
    }

    /// Starts watching `url` (a refreshed URL, or the URL after `refreshPushURLToken`).
    /// Everything reported about the previous URL is forgotten; the same URL again is a no-op.
    package mutating func accept(_ url: PushURL) {
        if url == self.url { return }
        self.url = url
        authKey = AuthKeySigner.expiry(of: url, timestampMeaning: configuration.timestampMeaning)
            .map { Deadline(expiresAt: $0, lead: configuration.authKeyLeadTime) }
        token = PushToken(url: url, parameter: configuration.tokenParameter).flatMap { tokenDeadline($0.value) }
    }

    /// A token's deadline, when ``Configuration/tokenExpiry`` can read its expiry.
    private func tokenDeadline(_ value: String) -> Deadline? {
        configuration.tokenExpiry.expiry(of: value).map { Deadline(expiresAt: $0, lead: configuration.tokenLeadTime) }
    }

    /// Watches a bearer token (a WHIP output's) instead of the URL's: its expiry read by
    /// ``Configuration/tokenExpiry`` (a JWT's `exp` by default). Forgets what was reported of
    /// the previous token.
    package mutating func watch(bearerToken: String) {
        token = tokenDeadline(bearerToken)
    }

    /// Like the `PushURL` variant; throws `invalidURL` (and keeps watching the old URL) when `url` is not a push URL.
    package mutating func accept(_ url: String) throws(LivePushError) {
        accept(try PushURL(url))
    }

    /// The events due at `now` (Unix seconds) that were not reported yet, in time order.
    package mutating func poll(now: Int64) -> [AuthExpiryEvent] {
        var due: [(at: Int64, order: Int, event: AuthExpiryEvent)] = []
        if var d = authKey {
            if !d.warned, now >= d.warnAt {
                d.warned = true
                due.append((d.warnAt, 0, .authenticationOverdue(expiresAt: d.expiresAt)))
            }
            if !d.expired, now > d.expiresAt {
                d.warned = true
                d.expired = true
                due.append((d.expiresAt, 1, .authExpired(at: d.expiresAt)))
            }
            authKey = d
        }
        if var d = token {
            if !d.warned, now >= d.warnAt {
                d.warned = true
                due.append((d.warnAt, 0, .tokenWillExpire(expiresAt: d.expiresAt)))
            }
            if !d.expired, now > d.expiresAt {
                d.warned = true
                d.expired = true
                due.append((d.expiresAt, 1, .tokenExpired(at: d.expiresAt)))
            }
            token = d
        }
        return due.sorted { ($0.at, $0.order) < ($1.at, $1.order) }.map(\.event)
    }

    /// Shows the URL redacted (`dump` of a `PushURL` itself would show its raw value).
    package var customMirror: Mirror {
        Mirror(self, children: [
            "url": url?.redacted as Any, "authKeyExpiresAt": authKeyExpiresAt as Any,
            "tokenExpiresAt": tokenExpiresAt as Any, "nextDeadline": nextDeadline as Any,
        ], displayStyle: .struct)
    }

    /// ``poll(now:)`` at the clock's current time.
    package mutating func poll(clock: some WallClock) -> [AuthExpiryEvent] {
        poll(now: clock.now)
    }
}
