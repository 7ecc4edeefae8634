import Synchronization

/// A wall clock that only moves when told to; for tests. Safe to share between threads.
///
///     let clock = ManualWallClock(now: 1_700_000_000)
///     clock.advance(by: .seconds(30))
package final class ManualWallClock: WallClock {
    private let seconds: Mutex<Int64>

    /// Creates a clock that reads `now` (Unix seconds) until it is moved.
    package init(now: Int64 = 0) {
        seconds = Mutex(now)
    }

    package var now: Int64 {
        seconds.withLock { $0 }
    }

    /// Sets the current time (Unix seconds).
    package func set(_ now: Int64) {
        seconds.withLock { $0 = now }
    }

    /// Moves the clock forward (or back, with a negative duration) by whole seconds.
    package func advance(by duration: Duration) {
        seconds.withLock { $0 = $0.addingClamped(duration.wholeSeconds) }
    }
}
