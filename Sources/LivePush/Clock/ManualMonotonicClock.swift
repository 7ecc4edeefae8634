import Synchronization

/// A clock the test moves by hand: the flow's waits are answered by moving it, never by
/// sleeping (as SwiftNIO's `EmbeddedEventLoop` advances its time). Safe to share between the
/// test and the threads of the piece it drives.
final class ManualMonotonicClock: MonotonicClock {
    private let time: Mutex<MediaTime>

    init(at start: MediaTime = .seconds(1000)) {
        time = Mutex(start)
    }

    func now() -> MediaTime { time.withLock { $0 } }

    /// Moves the clock to `time`, if that is later (it never goes back).
    func advance(to later: MediaTime) {
        time.withLock { $0 = max($0, later) }
    }

    func advance(by span: MediaTime) {
        time.withLock { $0 = $0 + span }
    }
}
