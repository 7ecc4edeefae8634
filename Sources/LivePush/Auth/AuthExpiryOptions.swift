/// How a push reads the expiry of its URL's `auth_key` or token, and how early it warns
/// (``PushConfig/auth``).
public struct AuthExpiryOptions: Sendable {
    /// How the auth_key TIMESTAMP is read (the expiry itself by default).
    public var timestampMeaning: AuthTimestampMeaning
    /// How long before the auth_key's expiry to report `authenticationOverdue`.
    public var authKeyLeadTime: Duration
    /// How long before the token's expiry to report `tokenWillExpire`.
    public var tokenLeadTime: Duration
    /// The query parameter that carries the token.
    public var tokenParameter: String
    /// How the token's expiry is read (`<expiryUnixSeconds>-...` by default).
    public var tokenExpiry: PushTokenExpiry

    /// Creates a configuration; the defaults are those of ``PushConfig/auth``.
    public init(
        timestampMeaning: AuthTimestampMeaning = .expiry,
        authKeyLeadTime: Duration = .seconds(60),
        tokenLeadTime: Duration = .seconds(30),
        tokenParameter: String = PushToken.defaultParameterName,
        tokenExpiry: PushTokenExpiry = .jwtOrExpiryPrefix
    ) {
        self.timestampMeaning = timestampMeaning
        self.authKeyLeadTime = authKeyLeadTime
        self.tokenLeadTime = tokenLeadTime
        self.tokenParameter = tokenParameter
        self.tokenExpiry = tokenExpiry
    }
}
