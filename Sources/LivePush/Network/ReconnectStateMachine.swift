/// Decides, after a lost connection and after each failed attempt, whether to try again and
/// how long to wait first. Pure: the sender thread does the waiting and the connecting.
///
/// Two budgets run side by side:
/// - **Retries** (`ReconnectPolicy`, `connectRetryCount`): spent by every ordinary failure
///   (refused, reset, timed out...).
/// - **Stale-session grace** (`PushConfig.staleSessionGrace`): a publish rejected as "already
///   publishing" on a reconnect means the server still holds our previous publisher (the old
///   path died silently and the server has not noticed yet; nginx-rtmp keeps it until
///   `drop_idle_publisher` or its read timeout). Waiting is the only cure, so these rejections
///   spend time, not retries: LivePush keeps trying, with a growing interval up to a cap, until
///   the grace since the first such rejection has passed.
struct ReconnectStateMachine: Sendable {
    enum Decision: Sendable, Equatable {
        /// Wait `delay`, then make counted attempt `attempt` (reported as `reconnectStarted`).
        case retry(attempt: Int, delay: Duration)
        /// The server still holds the previous session: wait `delay`, then try again. `attempt`
        /// counts these rejections; `waited` is the time since the first one.
        case awaitStaleSession(attempt: Int, waited: Duration, delay: Duration)
        /// Out of retries or grace, or the error cannot be cured by trying again.
        case giveUp(LivePushError)
    }

    struct StaleSessionPolicy: Sendable, Equatable {
        /// How long the server may hold the previous session before LivePush gives up.
        var grace: Duration
        /// The first wait after a stale-session rejection; each later one is 1.5 times longer...
        var initialInterval: Duration
        /// ...up to this, so that recovery follows soon after the server lets go.
        var maxInterval: Duration
    }

    private let policy: ReconnectPolicy
    private let stale: StaleSessionPolicy
    private var retries = 0
    private var staleRejections = 0
    /// Monotonic µs of the first stale-session rejection in this episode.
    private var staleSince: Int64?
    /// Draws the jitter; seeded, so that a test can replay the waits.
    private var random: SplitMix64

    init(policy: ReconnectPolicy, stale: StaleSessionPolicy, seed: UInt64 = .random(in: 0...UInt64.max)) {
        self.policy = policy
        self.stale = stale
        random = SplitMix64(seed: seed)
    }

    /// The first decision of an episode. Without an error (a requested reconnect: a manual
    /// `reconnect()`, a refreshed URL) the attempt is made at once.
    mutating func begin(after error: LivePushError?) -> Decision {
        retries = 0
        staleRejections = 0
        staleSince = nil
        guard let error else {
            retries = 1
            return .retry(attempt: 1, delay: .zero)
        }
        return nextRetry(after: error)
    }

    /// The decision after attempt failed with `error`, at monotonic time `now` (µs).
    mutating func attemptFailed(_ error: LivePushError, now: Int64) -> Decision {
        guard Self.isStaleSession(error) else { return nextRetry(after: error) }
        let since = staleSince ?? now
        staleSince = since
        let waited = Duration.microseconds(now - since)
        guard waited < stale.grace else {
            let seconds = Double(waited.milliseconds) / 1000
            return .giveUp(LivePushError(.publishRejected,
                "the server still held the previous publisher after \(seconds) s (stale-session grace); \(error.detail ?? "")"))
        }
        staleRejections += 1
        var delay = stale.initialInterval
        for _ in 1..<staleRejections where delay < stale.maxInterval { delay = delay * 1.5 }
        delay = min(delay, stale.maxInterval, stale.grace - waited)
        return .awaitStaleSession(attempt: staleRejections, waited: waited, delay: delay)
    }

    private mutating func nextRetry(after error: LivePushError) -> Decision {
        guard ReconnectPolicy.isRetryable(error), let delay = policy.delay(beforeAttempt: retries + 1) else {
            return .giveUp(error)
        }
        retries += 1
        guard policy.jitter > 0 else { return .retry(attempt: retries, delay: delay) }
        let share = Double(random.next() >> 11) / Double(1 << 53)  // uniform in 0..<1
        return .retry(attempt: retries, delay: delay * (1 - policy.jitter * share))
    }

    /// Whether a rejection means the server still holds a publisher of this stream: nginx-rtmp
    /// says `NetStream.Publish.BadName` "Already publishing"; other servers "already published",
    /// "is already in use", "stream already exists".
    static func isStaleSession(_ error: LivePushError) -> Bool {
        guard error.code == .publishRejected, let detail = error.detail?.lowercased() else { return false }
        return ["already publishing", "already published", "already in use", "already exists", "being published"]
            .contains { detail.contains($0) }
    }
}

/// A small seeded generator (Steele, Lea and Flood's SplitMix64): enough for jitter.
struct SplitMix64: Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
