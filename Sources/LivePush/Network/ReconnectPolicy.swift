/// How often and how long to wait before each reconnect attempt.
///
/// The reference SDK retries 5 times 1000 ms apart; a desktop broadcaster grows the delay
/// ×1.5 per attempt; a 24/7 channel retries forever, doubling from 1 s up to 30 s with jitter.
/// All three are this type with different figures.
public struct ReconnectPolicy: Sendable, Equatable {
    /// ``maxAttempts`` of a policy that never gives up (OBS's "reconnect until stopped").
    public static let forever = Int.max

    /// Attempts after a lost connection (0 disables automatic reconnect; 1...100, or ``forever``).
    public var maxAttempts: Int
    /// Wait before the first attempt.
    public var interval: Duration
    /// Each later wait is the previous one times this (1 = constant).
    public var backoff: Double
    /// Upper bound for a single wait.
    public var maxInterval: Duration
    /// Each wait is shortened by a random part of up to this fraction (0...1), so that many
    /// channels that lost one server do not all come back to it in the same instant.
    public var jitter: Double

    /// Creates a policy; the defaults are ``PushConfig``'s.
    public init(maxAttempts: Int = 5, interval: Duration = .milliseconds(1000), backoff: Double = 1,
                maxInterval: Duration = .seconds(30), jitter: Double = 0) {
        self.maxAttempts = maxAttempts == Self.forever ? Self.forever : max(0, min(100, maxAttempts))
        self.interval = interval
        self.backoff = max(1, backoff)
        self.maxInterval = maxInterval
        self.jitter = min(1, max(0, jitter))
    }

    /// The wait before attempt `attempt` (1-based), or nil when no attempts are left. Without
    /// jitter; `ReconnectStateMachine` applies it.
    public func delay(beforeAttempt attempt: Int) -> Duration? {
        guard attempt >= 1, attempt <= maxAttempts else { return nil }
        guard backoff > 1 else { return min(interval, maxInterval) }
        var delay = interval
        for _ in 1..<attempt {
            delay = delay * backoff
            if delay >= maxInterval { return maxInterval }
        }
        return min(delay, maxInterval)
    }

    /// Whether a failure is worth another attempt: a server that rejects the stream name or
    /// the credentials will reject it again, except for "already publishing", which nginx-rtmp
    /// reports for a moment after a dropped publisher; a certificate that failed verification
    /// will fail it again, and so will a missing GStreamer package.
    public static func isRetryable(_ error: LivePushError) -> Bool {
        switch error.code {
        case .invalidURL, .urlSetupFailed, .authExpired, .tlsVerificationFailed, .webrtcUnavailable: false
        case .publishRejected: error.detail?.contains("BadName") != true || error.detail?.contains("lready") == true
        default: true
        }
    }
}
