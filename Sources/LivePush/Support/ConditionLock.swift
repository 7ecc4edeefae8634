#if canImport(Glibc)
import Glibc
#endif

/// A mutex with a condition variable, for the two worker threads of a push.
///
/// Blocking threads (librtmp calls block) need a real condition variable rather than Swift
/// concurrency; this is the small pthread wrapper, with timed waits on the monotonic clock.
final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Call with the lock held (inside `withLock`). Returns false when the timeout passed.
    @discardableResult
    func wait(timeout: Duration? = nil) -> Bool {
        guard let timeout else {
            pthread_cond_wait(condition, mutex)
            return true
        }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let total = Int64(now.tv_nsec) + timeout.nanoseconds
        var deadline = timespec(tv_sec: now.tv_sec + Int(total / 1_000_000_000), tv_nsec: Int(total % 1_000_000_000))
        return pthread_cond_timedwait(condition, mutex, &deadline) == 0
    }

    /// Call with the lock held. Waits while `condition` holds, `limit` at most in all (each
    /// wake-up checks it again); returns false when the limit passed first.
    @discardableResult
    func wait(while condition: () -> Bool, limit: Duration) -> Bool {
        let deadline = monotonicMicroseconds() + limit.nanoseconds / 1000
        while condition() {
            let left = deadline - monotonicMicroseconds()
            if left <= 0 { return false }
            wait(timeout: .microseconds(left))
        }
        return true
    }

    /// Call with the lock held.
    func broadcast() { pthread_cond_broadcast(condition) }

    /// Runs `body` under the lock and, when it returns true, wakes the waiting threads once the
    /// lock is released. A thread woken while the waker still holds the lock only wakes to block
    /// on the mutex (glibc does not hand the mutex over): two more system calls and a context
    /// switch per wake-up, on the path that runs once per batch of every push.
    func withLockThenBroadcast(_ body: () -> Bool) {
        pthread_mutex_lock(mutex)
        let wake = body()
        pthread_mutex_unlock(mutex)
        if wake { pthread_cond_broadcast(condition) }
    }

    /// Wakes one waiting thread. Call with the lock held.
    func signal() { pthread_cond_signal(condition) }
}

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
