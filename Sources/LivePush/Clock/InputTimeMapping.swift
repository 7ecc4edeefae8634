/// How an input's time lands on the output timeline while one clock segment lasts. Only the
/// ``OutputClock`` makes one (``OutputClock/mapping(placing:)``, ``OutputClock/inputMapping``), so
/// cues, breaks and blackouts read from an input are placed exactly as its packets are stamped,
/// never by offsets kept elsewhere.
struct InputTimeMapping: Sendable, Equatable {
    /// Output time minus input time, µs.
    private let shift: Int64

    /// Input time is output time (what an input that is not on air yet is read against).
    static let identity = InputTimeMapping(shift: 0)

    init(shift: Int64) {
        self.shift = shift
    }

    /// The mapping that puts input time `inputTime` at output time `outputTime`.
    init(placing inputTime: Int64, at outputTime: Int64) {
        shift = outputTime - inputTime
    }

    /// Where input time `inputTime` (µs) lands on the output.
    func outputTime(_ inputTime: Int64) -> Int64 { inputTime + shift }

    /// The input time that lands at output time `outputTime` (µs).
    func inputTime(_ outputTime: Int64) -> Int64 { outputTime - shift }
}
