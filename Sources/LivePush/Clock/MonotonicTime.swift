#if canImport(Glibc)
import Glibc
#endif

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

/// Monotonic time in microseconds (`CLOCK_MONOTONIC`).
///
/// Only the edges call it: the transports (``RTMPSession``, ``SRTSession``), libav's interrupt
/// callbacks and transcoder (`Media/`), the shared scheduling threads (`Scheduling/`) and
/// ``SystemMonotonicClock``. The push's flow reads its ``PushConfig/monotonicClock`` instead.
func monotonicMicroseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
}
