/// Where the switcher (``Switcher``) reads the time: the process's monotonic clock in a push,
/// a clock the test moves by hand in a unit test, so that pacing and pauses are decided
/// without sleeping.
protocol MonotonicClock {
    /// The time now (monotonic: only moves forward; its origin means nothing).
    func now() -> MediaTime
}

/// `CLOCK_MONOTONIC`, the clock every push runs on.
struct SystemMonotonicClock: MonotonicClock {
    func now() -> MediaTime { .microseconds(monotonicMicroseconds()) }
}
