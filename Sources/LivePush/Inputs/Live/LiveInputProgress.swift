import Synchronization

/// What a live input's producer shares with other threads: its figures (``PushStats/input``),
/// the output time made so far (a live playout entry's ``PlayoutEntryInput/played``), and the
/// stop that ends its waits for a frame slot at once.
final class LiveInputProgress: Sendable {
    /// The switches and fills so far; the feed's own counts are added when read.
    let figures = Mutex(LiveInputStats())
    /// Output time sent so far (µs).
    private let position = Atomic<Int64>(0)
    private let stopped = Atomic<Bool>(false)
    /// Woken by ``stop()``: the producer sleeping until its next slot is due.
    private let stopping = ProgressSignal()
    /// The push's clock: the producer's slots fall due on it (``sleep(until:)``), and the feed
    /// and the switching read it too.
    let clock: any MonotonicClock

    init(clock: any MonotonicClock = SystemMonotonicClock()) {
        self.clock = clock
    }

    /// Output time sent so far (µs).
    var sent: Int64 { position.load(ordering: .relaxed) }

    /// The slot at output time `time` is going out. Written by the producer alone.
    func didSend(upTo time: Int64) {
        if time > position.load(ordering: .relaxed) { position.store(time, ordering: .relaxed) }
    }

    var isStopped: Bool { stopped.load(ordering: .acquiring) }

    /// The push stopped: a sleep ends at once, and every later one returns false.
    func stop() {
        stopped.store(true, ordering: .releasing)
        stopping.wake()
    }

    /// Sleeps until monotonic time `due` (µs); false once stopped.
    func sleep(until due: Int64) -> Bool {
        while !isStopped {
            let left = due - clock.now().microseconds
            if left <= 0 { return true }
            stopping.wait(limit: .microseconds(left)) { isStopped }
        }
        return false
    }
}
