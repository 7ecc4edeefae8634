import LivePush

/// How the receiver or loopback checks a publisher's `auth_key`, like a CDN: same algorithm
/// (type A), a shared private key, a tolerated clock skew. An expired or forged key gets
/// `NetStream.Publish.BadAuth`.
public struct PublishAuthentication: Sendable {
    /// The key URLs are signed with.
    public var privateKey: String
    /// How the auth_key's timestamp is read.
    public var timestampMeaning: AuthTimestampMeaning
    /// How far the clocks may disagree.
    public var allowedSkew: Duration
    /// The server's clock (injectable for tests).
    public var clock: any WallClock

    /// Creates a check.
    public init(privateKey: String, timestampMeaning: AuthTimestampMeaning = .expiry, allowedSkew: Duration = .zero,
                clock: any WallClock = SystemWallClock()) {
        self.privateKey = privateKey
        self.timestampMeaning = timestampMeaning
        self.allowedSkew = allowedSkew
        self.clock = clock
    }

    /// The verdict on a publish of `rawName` (stream name with its query) in `app`.
    func verify(app: String, rawName: String) -> AuthVerification {
        guard let url = try? PushURL("rtmp://127.0.0.1/\(app)/\(rawName)") else { return .malformed(reason: "bad stream name") }
        return AuthKeySigner(privateKey: privateKey, timestampMeaning: timestampMeaning)
            .verify(url, now: clock.now, allowedSkew: allowedSkew)
    }
}
