/// What a push reports as its URL's credentials near their expiry (``PushConfig/auth``). Times are Unix seconds.
public enum AuthExpiryEvent: Sendable, Equatable, CustomStringConvertible {
    /// The auth_key expires within the lead time (60 s by default): ask the app for a freshly
    /// signed URL (`pusherPushURLAuthenticationOverdue` → new URL). Once per URL.
    case authenticationOverdue(expiresAt: Int64)
    /// The auth_key has expired: a reconnect with this URL would be rejected. Once per URL.
    case authExpired(at: Int64)
    /// The token expires within the lead time (30 s by default): the app should fetch a new
    /// token and call `refreshPushURLToken(_:)`. Once per URL.
    case tokenWillExpire(expiresAt: Int64)
    /// The token has expired: the push must restart with a new URL. Once per URL.
    case tokenExpired(at: Int64)

    /// A stable camelCase name.
    public var name: String {
        switch self {
        case .authenticationOverdue: "pushURLAuthenticationOverdue"
        case .authExpired: "authExpired"
        case .tokenWillExpire: "tokenWillExpire"
        case .tokenExpired: "tokenExpired"
        }
    }

    /// `authExpired` for the two expiry events (the detail says which credential); nil for warnings.
    public var error: LivePushError? {
        switch self {
        case .authenticationOverdue, .tokenWillExpire: nil
        case .authExpired(let at): LivePushError(.authExpired, "auth_key expired at \(UTCTime.format(at))")
        case .tokenExpired(let at): LivePushError(.authExpired, "token expired at \(UTCTime.format(at))")
        }
    }

    public var description: String {
        switch self {
        case .authenticationOverdue(let at): "\(name) (auth_key expires \(UTCTime.format(at)))"
        case .authExpired(let at): "\(name) (at \(UTCTime.format(at)))"
        case .tokenWillExpire(let at): "\(name) (token expires \(UTCTime.format(at)))"
        case .tokenExpired(let at): "\(name) (at \(UTCTime.format(at)))"
        }
    }
}
