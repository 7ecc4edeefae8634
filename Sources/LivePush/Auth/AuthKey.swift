/// The value of a "type A" `auth_key` query parameter: `TIMESTAMP-RAND-UID-HASH`.
///
/// - `timestamp`: Unix seconds; either the expiry time itself or the time of signing,
///   see ``AuthTimestampMeaning``.
/// - `rand`: `0` or a UUID without hyphens. `uid`: `0` (both any text without `-`).
/// - `hash`: lowercase hex MD5 of `URI-TIMESTAMP-RAND-UID-PRIVATEKEY`, URI being `/app/stream`.
///
/// Whoever holds the full value can publish until it expires, so ``description`` (and
/// therefore `"\(authKey)"`, `print`, `dump`, error details) masks the hash; use ``rawValue``
/// only to build the URL itself.
public struct AuthKey: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    /// The query parameter name.
    public static let parameterName = "auth_key"

    /// Unix seconds: the expiry or the time of signing (see ``AuthTimestampMeaning``).
    public let timestamp: Int64
    /// `0` or a UUID without hyphens.
    public let rand: String
    /// The user id, usually `0`.
    public let uid: String
    /// 32 lowercase hex digits.
    public let hash: String

    /// Creates a key from its four parts.
    public init(timestamp: Int64, rand: String = "0", uid: String = "0", hash: String) {
        self.timestamp = timestamp
        self.rand = rand
        self.uid = uid
        self.hash = hash
    }

    /// Parses `TIMESTAMP-RAND-UID-HASH`. Throws `invalidURL` with a reason that never contains the hash.
    public init(parsing value: some StringProtocol) throws(LivePushError) {
        if let problem = Self.problem(parsing: value) {
            throw LivePushError(.invalidURL, "malformed auth_key \(Redaction.redactAuthKey(value)): \(problem)")
        }
        let parts = value.split(separator: "-", omittingEmptySubsequences: false)
        self.init(timestamp: Int64(parts[0])!, rand: String(parts[1]), uid: String(parts[2]), hash: String(parts[3]))
    }

    /// Why `value` is not a well-formed auth_key, or nil when it is. Never mentions the hash's digits.
    static func problem(parsing value: some StringProtocol) -> String? {
        let parts = value.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 4 else {
            return "expected 4 fields TIMESTAMP-RAND-UID-HASH separated by '-', found \(parts.count)"
        }
        guard !parts[0].isEmpty, parts[0].allSatisfy({ $0.isASCII && $0.isNumber }), Int64(parts[0]) != nil else {
            return "TIMESTAMP is not a number of Unix seconds"
        }
        guard isToken(parts[1]) else { return "RAND is empty or has characters other than letters and digits" }
        guard isToken(parts[2]) else { return "UID is empty or has characters other than letters and digits" }
        guard isLowercaseMD5(parts[3]) else { return "HASH is not 32 lowercase hex digits" }
        return nil
    }

    /// RAND and UID: non-empty, ASCII letters and digits (so they can never break the
    /// `-`-separated format or the query string).
    static func isToken(_ s: some StringProtocol) -> Bool {
        !s.isEmpty && s.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
    }

    static func isLowercaseMD5(_ s: some StringProtocol) -> Bool {
        s.utf8.count == 32 && s.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// `TIMESTAMP-RAND-UID-HASH`, the full secret value for the URL.
    public var rawValue: String { "\(timestamp)-\(rand)-\(uid)-\(hash)" }

    /// `TIMESTAMP-RAND-UID-abcd****`: everything but the hash, which is masked.
    public var description: String { Redaction.redactAuthKey(rawValue) }

    public var customMirror: Mirror {
        Mirror(self, children: ["timestamp": timestamp, "rand": rand, "uid": uid, "hash": Redaction.mask(hash)],
               displayStyle: .struct)
    }
}
