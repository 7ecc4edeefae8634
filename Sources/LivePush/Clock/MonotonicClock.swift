/// Where the push's flow reads the time: the process's monotonic clock in a push, a clock the
/// test moves by hand in a unit test (``ManualMonotonicClock``), so that pacing, pauses,
/// reconnect delays and figures are decided without sleeping.
///
/// One clock per push: ``PushConfig/monotonicClock`` carries it, and the engine, its outputs,
/// its live inputs and its channel read it from there. Only the C edges (the transports, libav's
/// interrupt callbacks) and the shared scheduling threads call ``monotonicMicroseconds()``.
protocol MonotonicClock: Sendable {
    /// The time now (monotonic: only moves forward; its origin means nothing).
    func now() -> MediaTime
}

/// `CLOCK_MONOTONIC`, the clock every push runs on.
struct SystemMonotonicClock: MonotonicClock {
    func now() -> MediaTime { .microseconds(monotonicMicroseconds()) }
}
