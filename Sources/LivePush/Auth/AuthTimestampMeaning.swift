/// What the TIMESTAMP of an `auth_key` stands for.
///
/// Providers differ: for push URLs the TIMESTAMP is commonly the expiry time itself
/// (``expiry``); "type A" CDN signing defines it as the signing time, the URL staying valid
/// for a validity period configured for the domain (``issuedAt(validity:)``).
public enum AuthTimestampMeaning: Sendable, Equatable, CustomStringConvertible {
    /// TIMESTAMP is the expiry time (Unix seconds).
    case expiry
    /// TIMESTAMP is the signing time; the URL expires `validity` later (whole seconds count).
    case issuedAt(validity: Duration)

    /// The Unix second at which a URL signed with `timestamp` expires.
    public func expiry(ofTimestamp timestamp: Int64) -> Int64 {
        switch self {
        case .expiry: timestamp
        case .issuedAt(let validity): timestamp.addingClamped(validity.wholeSeconds)
        }
    }

    /// The TIMESTAMP to sign so that the URL expires at `expiresAt` (Unix seconds).
    public func timestamp(forExpiry expiresAt: Int64) -> Int64 {
        switch self {
        case .expiry: expiresAt
        case .issuedAt(let validity): expiresAt.addingClamped(-validity.wholeSeconds)
        }
    }

    public var description: String {
        switch self {
        case .expiry: "expiry"
        case .issuedAt(let validity): "issuedAt(validity: \(validity.wholeSeconds) s)"
        }
    }
}

extension Duration {
    /// The whole seconds of the duration (fractions are dropped).
    var wholeSeconds: Int64 { components.seconds }
}

extension Int64 {
    /// `self + other`, saturating instead of trapping (timestamps come from untrusted URLs).
    func addingClamped(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
