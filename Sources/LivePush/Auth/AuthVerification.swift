/// The outcome of checking a push URL's `auth_key`, with the precise reason when it fails.
///
/// Checks run in this order: present, well formed, hash, expiry. A forged URL is therefore
/// reported as ``hashMismatch`` even when it has also expired.
public enum AuthVerification: Sendable, Equatable, CustomStringConvertible {
    /// The hash matches and the URL has not expired (allowing for the skew); it expires at `expiresAt` (Unix seconds).
    case valid(expiresAt: Int64)
    /// The URL has no `auth_key` parameter.
    case missing
    /// The `auth_key` is not `TIMESTAMP-RAND-UID-HASH`, or appears more than once. The reason never contains the hash.
    case malformed(reason: String)
    /// The hash was computed with another private key, for another path, or over other fields.
    case hashMismatch
    /// The hash matches but the URL expired at `at` (Unix seconds).
    case expired(at: Int64)

    /// True when the key was accepted.
    public var isValid: Bool {
        if case .valid = self { return true }
        return false
    }

    /// A short phrase, e.g. `valid until 2026-11-22 05:00:00 UTC` or `hash mismatch`.
    public var description: String {
        switch self {
        case .valid(let expiresAt): "valid until \(UTCTime.format(expiresAt))"
        case .missing: "missing auth_key"
        case .malformed(let reason): "malformed auth_key: \(reason)"
        case .hashMismatch: "hash mismatch"
        case .expired(let at): "expired at \(UTCTime.format(at))"
        }
    }

    /// A sentence for people, relative to `now` (Unix seconds), e.g.
    /// `valid: expires 2026-11-22 05:00:00 UTC (in 3599 s)` or `invalid: expired 120 s ago (at ...)`.
    public func explanation(now: Int64) -> String {
        switch self {
        case .valid(let expiresAt):
            let left = expiresAt.addingClamped(-now)
            return left >= 0
                ? "valid: expires \(UTCTime.format(expiresAt)) (in \(left) s)"
                : "valid: expired \(UTCTime.format(expiresAt)) (\(-left) s ago, within the allowed clock skew)"
        case .missing:
            return "invalid: the URL has no auth_key parameter"
        case .malformed(let reason):
            return "invalid: malformed auth_key (\(reason))"
        case .hashMismatch:
            return "invalid: hash mismatch (signature computed with a different key or path)"
        case .expired(let at):
            return "invalid: expired \(now.addingClamped(-at)) s ago (at \(UTCTime.format(at)))"
        }
    }

    /// The error a pusher would report for this outcome: `authExpired` when expired,
    /// `invalidURL` when missing or malformed, `publishRejected` on a hash mismatch; nil when valid.
    public var error: LivePushError? {
        switch self {
        case .valid: nil
        case .missing: LivePushError(.invalidURL, "the URL has no auth_key parameter")
        case .malformed(let reason): LivePushError(.invalidURL, "malformed auth_key: \(reason)")
        case .hashMismatch: LivePushError(.publishRejected, "the auth_key hash does not match the private key and path")
        case .expired(let at): LivePushError(.authExpired, "expired at \(UTCTime.format(at))")
        }
    }
}
