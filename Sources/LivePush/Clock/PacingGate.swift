/// Releases a real-time push's packets against the wall clock, in batches, and measures how
/// late each one goes out. Pure: the producer passes in when a packet is due (from the
/// ``OutputClock``) and the time now, and waits as told.
struct PacingGate: Sendable {
    /// How far ahead of the wall clock a packet may be released (µs): one wake-up per batch of
    /// this length. A batch's swing adds to the lateness of a busy moment; with the producers
    /// on the shared scheduler, the extra wake-ups of a short batch are cheap.
    static let slack: Int64 = 20_000

    /// How early a batch may start (µs): a producer on the ``PacingScheduler`` runs up to its
    /// coalescing window early, and then sends rather than waits again.
    let earlyRelease: Int64

    private var batchEnd = Int64.min
    /// When the packet released last was due (monotonic µs).
    private(set) var lastDue = Int64.min
    private(set) var lateness = PacingLateness()

    init(earlyRelease: Int64 = PacingScheduler.coalescingWindow) {
        self.earlyRelease = earlyRelease
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
            batchEnd = due + Self.slack
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
