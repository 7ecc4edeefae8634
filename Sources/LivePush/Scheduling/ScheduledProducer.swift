import Synchronization

/// A real-time producer on the ``PacingScheduler``: runs ``PushEngine/step(_:)`` until the
/// session has to wait, and tells the scheduler until when.
final class ScheduledProducer: ScheduledJob, Sendable {
    /// Longest turn before the thread goes to the other jobs: an encoding input takes a few
    /// milliseconds per frame, and a turn that catches up on many frames must not starve the rest.
    static let turnBudget: Int64 = 10_000

    private struct State {
        /// What the producer starts with, until it starts.
        var parts: ProducerParts?
        var producer: ProducerState?
        var started = false
    }

    private let session: PushEngine
    /// The producer's parts and state, which go from one pacing thread to another between
    /// turns. The scheduler runs a job on one thread at a time, so this lock is never contended
    /// (one uncontended lock per turn, not per packet): it makes the compiler check that they
    /// move between threads through here and nowhere else.
    private let state: Mutex<State>

    init(session: PushEngine, parts: sending ProducerParts) {
        self.session = session
        state = Mutex(State(parts: parts))
    }

    func run() -> ScheduledRun {
        state.withLock { state in
            if !state.started {
                guard session.canStartProducing else { return .whenWoken }
                state.started = true
                if let parts = state.parts.take() { state.producer = session.prepareProducer(parts) }
            }
            guard state.producer != nil else { return .finished }
            // In place: the producer's state is about 900 bytes (the switcher), and moving it out
            // of the lock and back every turn (1000 channels: some 70,000 turns a second) cost
            // a memmove and a retain and release of every reference in it.
            let next = runTurn(&state.producer!)
            // A finished push lets go of its inputs (decoders, encoders) at once.
            if next == .finished { state.producer = nil }
            return next
        }
    }

    func passOnWork() {
        session.wakeSenders()
    }

    private func runTurn(_ producer: inout ProducerState) -> ScheduledRun {
        let clock = session.config.monotonicClock
        let turnStart = clock.now().microseconds
        while true {
            switch session.step(&producer) {
            case .again:
                let now = clock.now().microseconds
                if now - turnStart > Self.turnBudget { return .at(now) }
            case .wait(let until):
                guard let until else { return .whenWoken }
                return .at(until.microseconds)
            case .waitForRoom:
                // Only `--fast` pushes wait for room, and they have threads of their own.
                return .at(clock.now().microseconds + 10_000)
            case .finished:
                return .finished
            }
        }
    }
}
