import Dispatch
import Synchronization

/// Lets a thread that must wait for another's progress sleep until it is told, without a
/// thread that waits on the other side: a `--fast` producer waiting for room in the recorder's
/// queue, a stop waiting for the recording to close, a mixer waiting for a local decoder.
///
/// The owner keeps its state under its own lock; a waiter says what it waits for as a
/// condition read under that lock, and whoever changes that state calls ``wake()`` after
/// (outside its lock). A wake with nobody waiting costs one atomic load.
final class ProgressSignal: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    /// Waiters registered and not yet woken.
    private let waiting = Atomic<Int>(0)

    /// Waits until `isDone` (read under the owner's lock) holds, at most `limit` (forever for
    /// nil). Returns false when the limit passed first.
    @discardableResult
    func wait(limit: Duration? = nil, until isDone: () -> Bool) -> Bool {
        let deadline = limit.map { DispatchTime.now().uptimeNanoseconds + UInt64(max(0, $0.nanoseconds)) }
        while true {
            // Registered before looking: a change made after the look wakes this wait.
            waiting.add(1, ordering: .sequentiallyConsistent)
            if isDone() {
                // Not woken (or woken at once): a signal meant for this wait may follow, and
                // a later wait then returns early once and looks again.
                unregister()
                return true
            }
            guard let deadline else {
                semaphore.wait()
                continue
            }
            let now = DispatchTime.now().uptimeNanoseconds
            if now >= deadline || semaphore.wait(timeout: DispatchTime(uptimeNanoseconds: deadline)) == .timedOut {
                unregister()
                return isDone()
            }
        }
    }

    /// Wakes every waiting thread to look again. Call after the state changed, outside the owner's lock.
    func wake() {
        guard waiting.load(ordering: .sequentiallyConsistent) > 0 else { return }
        let count = waiting.exchange(0, ordering: .sequentiallyConsistent)
        for _ in 0..<count { semaphore.signal() }
    }

    /// A waiter that leaves without being woken takes its registration back, unless a wake
    /// took it already (then its signal is on the way).
    private func unregister() {
        var current = waiting.load(ordering: .sequentiallyConsistent)
        while current > 0 {
            let (exchanged, original) = waiting.compareExchange(expected: current, desired: current - 1,
                                                               ordering: .sequentiallyConsistent)
            if exchanged { return }
            current = original
        }
    }
}
