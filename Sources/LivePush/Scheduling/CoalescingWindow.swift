/// One pacing thread's window (see ``PacingScheduler/coalescingWindow``): which jobs it runs
/// in the wake-up it is in, how long it sleeps otherwise, and when it passes the work of the
/// jobs it ran on. Pure: the thread passes in the time and does the waiting.
struct CoalescingWindow: Sendable {
    let length: Int64
    /// Jobs due by then run in this wake-up.
    private var end = Int64.min
    /// When the first job whose work is not passed on yet ran.
    private var firstRanAt: Int64?

    init(length: Int64) {
        self.length = length
    }

    /// Whether the first job, due at `due`, runs now: it is due (which opens a window), or it
    /// falls due within the window open.
    mutating func admits(due: Int64, now: Int64) -> Bool {
        if due <= now {
            end = now + length
            return true
        }
        return due <= end
    }

    /// How long (µs) to sleep for the first job, due at `due`; nil when it runs now.
    func sleep(forJobDue due: Int64, now: Int64) -> Int64? {
        due > max(now, end) ? due - now : nil
    }

    /// A job ran at `now`; its work waits to be passed on.
    mutating func ran(at now: Int64) {
        if firstRanAt == nil { firstRanAt = now }
    }

    /// Whether the work waiting goes on before the thread sleeps: a thread that never gets to
    /// sleep (a busy process) still passes it on once per window.
    func passesOn(now: Int64) -> Bool {
        firstRanAt.map { now - $0 >= length } ?? false
    }

    mutating func passedOn() {
        firstRanAt = nil
    }
}
