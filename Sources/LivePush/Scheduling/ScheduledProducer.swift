/// A real-time producer on the ``PacingScheduler``: runs ``PushEngine/step(_:)`` until the
/// session has to wait, and tells the scheduler until when.
final class ScheduledProducer: ScheduledJob, @unchecked Sendable {
    /// Longest turn before the thread goes to the other jobs: an encoding input takes a few
    /// milliseconds per frame, and a turn that catches up on many frames must not starve the rest.
    static let turnBudget: Int64 = 10_000

    private let session: PushEngine
    // Used by one scheduler thread at a time (a job is never run twice at once).
    private var parts: ProducerParts?
    private var producer: ProducerState?
    private var started = false

    init(session: PushEngine, parts: sending ProducerParts) {
        self.session = session
        self.parts = parts
    }

    func run() -> ScheduledRun {
        if !started {
            guard session.canStartProducing else { return .whenWoken }
            started = true
            if let parts { producer = session.prepareProducer(parts) }
            parts = nil
        }
        guard var current = producer else { return .finished }
        let next = runTurn(&current)
        // A finished push lets go of its inputs (decoders, encoders) at once.
        producer = next == .finished ? nil : current
        return next
    }

    func passOnWork() {
        session.wakeSenders()
    }

    private func runTurn(_ producer: inout ProducerState) -> ScheduledRun {
        let turnStart = monotonicMicroseconds()
        while true {
            switch session.step(&producer) {
            case .again:
                let now = monotonicMicroseconds()
                if now - turnStart > Self.turnBudget { return .at(now) }
            case .wait(let until):
                guard let until else { return .whenWoken }
                return .at(until.microseconds)
            case .waitForRoom:
                // Only `--fast` pushes wait for room, and they have threads of their own.
                return .at(monotonicMicroseconds() + 10_000)
            case .finished:
                return .finished
            }
        }
    }
}
