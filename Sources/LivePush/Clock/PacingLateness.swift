/// How late a real-time push's packets went out: how long after the output clock made each
/// one due the producer handed it to the outputs (``PushStats/lateness``), or an output wrote
/// it to its socket (``PushStats/sendLateness``). Early release within the pacing slack counts
/// as on time, and a packet is never due before the one released before it (`PacingGate`).
/// A push that keeps up stays within a few milliseconds; a busy process shows here first.
public struct PacingLateness: Sendable, Equatable {
    /// Packets handed over more than 20, 50 and 100 ms after they were due.
    public var packetsLaterThan20ms = 0
    /// Packets written more than 50 ms after they were due.
    public var packetsLaterThan50ms = 0
    /// Packets written more than 100 ms after they were due.
    public var packetsLaterThan100ms = 0
    /// The latest any packet went out (µs), since the push started.
    public var worst: Int64 = 0

    /// Creates empty figures.
    public init() {}

    /// Counts one packet handed over `lateness` µs after it was due (negative: early).
    mutating func record(_ lateness: Int64) {
        worst = max(worst, lateness)
        guard lateness > 20_000 else { return }
        packetsLaterThan20ms += 1
        if lateness > 50_000 { packetsLaterThan50ms += 1 }
        if lateness > 100_000 { packetsLaterThan100ms += 1 }
    }
}
