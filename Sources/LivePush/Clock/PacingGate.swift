/// Releases a real-time push's packets against the wall clock, in batches, and measures how
/// late each one goes out. Pure: the producer passes in when a packet is due (from the
/// ``OutputClock``) and the time now, and waits as told.
struct PacingGate: Sendable {
    /// How far ahead of the wall clock a packet may be released (µs): one wake-up of the
    /// producer, and one of its send loop, per batch of this length. 100 ms: at 20 ms a
    /// real-time push spent more CPU on ~150 context switches a second than on its media
    /// (1.0x ffmpeg's CPU against 0.7x at 100 ms); a server or player buffers seconds, so a
    /// tenth of a second early is invisible downstream. A pause or a command starts a new
    /// batch (``startNewBatch()``), so what is due after it never goes early.
    static let batch: Int64 = 100_000

    /// How early a batch may start (µs): a producer on the ``PacingScheduler`` runs up to its
    /// coalescing window early, and then sends rather than waits again.
    let earlyRelease: Int64
    /// The batch length (µs), ``batch`` unless a test sets it.
    let slack: Int64

    private var batchEnd = Int64.min
    /// When the packet released last was due (monotonic µs).
    private(set) var lastDue = Int64.min
    private(set) var lateness = PacingLateness()

    init(earlyRelease: Int64 = PacingScheduler.coalescingWindow, slack: Int64 = PacingGate.batch) {
        self.earlyRelease = earlyRelease
        self.slack = slack
    }

    /// Nil when the packet due at `due` may go now (and it is counted as sent), else how many
    /// µs to wait before asking again.
    ///
    /// A packet is never due before the one released before it. Where an input starts again
    /// (a loop, a switch), its first pictures decode before the end of the sound already sent
    /// (B-frames): they go out at once, and their lateness counts from then.
    mutating func wait(forPacketDue due: Int64, now: Int64) -> Int64? {
        let due = max(due, lastDue)
        lastDue = due
        // Packets due within the slack of one that had to wait go out with it.
        if due > batchEnd {
            batchEnd = due + slack
            if due > now + earlyRelease { return due - now }
        }
        lateness.record(now - due)
        return nil
    }

    /// What is due moved (a pause, a command): the next packet starts a new batch.
    mutating func startNewBatch() {
        batchEnd = .min
    }
}
