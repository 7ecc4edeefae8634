
/// Signs push URLs with a "type A" `auth_key` and verifies them, as the server would.
///
///     let signer = AuthKeySigner(privateKey: key)                         // TIMESTAMP = expiry time
///     let url = try signer.sign("rtmp://host/live/s", validFor: .seconds(3600))
///     signer.verify(try PushURL(url), now: SystemWallClock().now)          // .valid(expiresAt: ...)
///
/// `auth_key=TIMESTAMP-RAND-UID-HASH`, HASH = lowercase hex MD5 of
/// `/app/stream-TIMESTAMP-RAND-UID-PRIVATEKEY` (the path without the query). Signing adds the
/// parameter or replaces an existing one and keeps every other query parameter as written.
///
/// The private key never appears in `description`, `dump` or an error.
public struct AuthKeySigner: Sendable, CustomStringConvertible, CustomReflectable {
    /// What the TIMESTAMP stands for; see ``AuthTimestampMeaning``.
    public var timestampMeaning: AuthTimestampMeaning
    private let privateKey: String

    /// Creates a signer with the CDN's private key.
    public init(privateKey: String, timestampMeaning: AuthTimestampMeaning = .expiry) {
        self.privateKey = privateKey
        self.timestampMeaning = timestampMeaning
    }

    // MARK: Signing

    /// The lowercase hex MD5 of `path-timestamp-rand-uid-privateKey`.
    public func hash(path: String, timestamp: Int64, rand: String = "0", uid: String = "0") -> String {
        Self.md5Hex("\(path)-\(timestamp)-\(rand)-\(uid)-\(privateKey)")
    }

    /// The auth_key for `path` (`/app/stream`) that expires at `expiresAt` (Unix seconds).
    /// Throws `invalidURL` when RAND or UID are not non-empty ASCII letters and digits.
    public func authKey(path: String, expiresAt: Int64, rand: String = "0", uid: String = "0") throws(LivePushError) -> AuthKey {
        guard AuthKey.isToken(rand) else { throw LivePushError(.invalidURL, "auth_key RAND must be ASCII letters and digits, e.g. 0 or a UUID without hyphens") }
        guard AuthKey.isToken(uid) else { throw LivePushError(.invalidURL, "auth_key UID must be ASCII letters and digits, e.g. 0") }
        let timestamp = timestampMeaning.timestamp(forExpiry: expiresAt)
        guard timestamp >= 0 else { throw LivePushError(.invalidURL, "auth_key TIMESTAMP would be negative") }
        return AuthKey(timestamp: timestamp, rand: rand, uid: uid, hash: hash(path: path, timestamp: timestamp, rand: rand, uid: uid))
    }

    /// `url` with an `auth_key` that expires at `expiresAt` (Unix seconds).
    public func sign(_ url: PushURL, expiresAt: Int64, rand: String = "0", uid: String = "0") throws(LivePushError) -> String {
        let key = try authKey(path: url.signedPath, expiresAt: expiresAt, rand: rand, uid: uid)
        return PushURLQuery.setting(AuthKey.parameterName, to: key.rawValue, inURL: url.rawValue)
    }

    /// `url` with an `auth_key` that expires at `expiresAt` (Unix seconds). Throws `invalidURL` for a bad URL.
    public func sign(_ url: String, expiresAt: Int64, rand: String = "0", uid: String = "0") throws(LivePushError) -> String {
        try sign(try PushURL.rtmp(url), expiresAt: expiresAt, rand: rand, uid: uid)
    }

    /// `url` with an `auth_key` that expires `validFor` after the clock's current time.
    ///
    /// With ``AuthTimestampMeaning/issuedAt(validity:)`` pass the domain's validity here:
    /// TIMESTAMP is then the current time.
    public func sign(
        _ url: String, validFor: Duration, clock: some WallClock = SystemWallClock(), rand: String = "0", uid: String = "0"
    ) throws(LivePushError) -> String {
        try sign(try PushURL.rtmp(url), expiresAt: clock.now.addingClamped(validFor.wholeSeconds), rand: rand, uid: uid)
    }

    /// A random RAND: a version-4 UUID without hyphens (32 lowercase hex digits).
    public static func randomRand() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return hex(bytes)
    }

    // MARK: Verifying

    /// Checks `url`'s auth_key the way the server does: well formed, hash over this
    /// signer's key and the URL's path, and `now <= expiry + allowedSkew`.
    public func verify(_ url: PushURL, now: Int64, allowedSkew: Duration = .zero) -> AuthVerification {
        let key: AuthKey
        switch Self.lookup(url) {
        case .missing: return .missing
        case .malformed(let reason): return .malformed(reason: reason)
        case .found(let found): key = found
        }
        let expected = hash(path: url.signedPath, timestamp: key.timestamp, rand: key.rand, uid: key.uid)
        guard Self.constantTimeEquals(expected, key.hash) else { return .hashMismatch }
        let expiresAt = timestampMeaning.expiry(ofTimestamp: key.timestamp)
        guard now <= expiresAt.addingClamped(max(0, allowedSkew.wholeSeconds)) else { return .expired(at: expiresAt) }
        return .valid(expiresAt: expiresAt)
    }

    /// Like the `PushURL` variant, for a URL string; throws `invalidURL` when it is not a push URL.
    public func verify(_ url: String, now: Int64, allowedSkew: Duration = .zero) throws(LivePushError) -> AuthVerification {
        verify(try PushURL.rtmp(url), now: now, allowedSkew: allowedSkew)
    }

    /// When `url`'s auth_key expires (Unix seconds), or nil when it has none or it is malformed.
    /// Needs no private key: the hash is not checked.
    public static func expiry(of url: PushURL, timestampMeaning: AuthTimestampMeaning) -> Int64? {
        guard case .found(let key) = lookup(url) else { return nil }
        return timestampMeaning.expiry(ofTimestamp: key.timestamp)
    }

    /// The auth_key of `url`, nil when absent or malformed.
    public static func authKey(of url: PushURL) -> AuthKey? {
        guard case .found(let key) = lookup(url) else { return nil }
        return key
    }

    // MARK: Secrets stay out of logs

    public var description: String { "AuthKeySigner(privateKey: ****, timestampMeaning: \(timestampMeaning))" }

    public var customMirror: Mirror {
        Mirror(self, children: ["privateKey": "****", "timestampMeaning": timestampMeaning], displayStyle: .struct)
    }

    // MARK: Internals

    enum Lookup {
        case missing
        case malformed(String)
        case found(AuthKey)
    }

    static func lookup(_ url: PushURL) -> Lookup {
        let values = PushURLQuery.values(of: AuthKey.parameterName, inQuery: url.query)
        guard let value = values.first else { return .missing }
        guard values.count == 1 else { return .malformed("auth_key appears \(values.count) times") }
        if let problem = AuthKey.problem(parsing: value) { return .malformed(problem) }
        guard let key = try? AuthKey(parsing: value) else { return .malformed("unreadable") }
        return .found(key)
    }

    static func md5Hex(_ text: String) -> String {
        hex(GnuTLS.md5(Array(text.utf8)))
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Compares in time that depends only on the lengths, not on where the first difference is.
    static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in x.indices { difference |= x[i] ^ y[i] }
        return difference == 0
    }
}
