import Synchronization

/// A real-time producer on the ``PacingScheduler``: runs ``PushEngine/step(_:)`` until the
/// session has to wait, and tells the scheduler until when.
final class ScheduledProducer: ScheduledJob, Sendable {
    /// Longest turn before the thread goes to the other jobs: an encoding input takes a few
    /// milliseconds per frame, and a turn that catches up on many frames must not starve the rest.
    static let turnBudget: Int64 = 10_000

    private struct State {
        /// The input, until the producer starts and the switcher takes it.
        var source: (any MediaInput)?
        var switcher: Switcher?
        var started = false
    }

    private let session: PushEngine
    /// The producer's inputs and switcher, which go from one pacing thread to another between
    /// turns. The scheduler runs a job on one thread at a time, so this lock is never contended
    /// (one uncontended lock per turn, not per packet): it makes the compiler check that they
    /// move between threads through here and nowhere else.
    private let state: Mutex<State>

    init(session: PushEngine, source: sending any MediaInput) {
        self.session = session
        state = Mutex(State(source: source))
    }

    func run() -> ScheduledRun {
        state.withLock { state in
            if !state.started {
                guard session.canStartProducing else { return .whenWoken }
                state.started = true
                if let source = state.source.take() { state.switcher = session.prepareProducer(source) }
            }
            guard var current = state.switcher.take() else { return .finished }
            let next = runTurn(&current)
            // A finished push lets go of its inputs (decoders, encoders) at once.
            if next != .finished { state.switcher = current }
            return next
        }
    }

    func passOnWork() {
        session.wakeSenders()
    }

    private func runTurn(_ switcher: inout Switcher) -> ScheduledRun {
        let turnStart = monotonicMicroseconds()
        while true {
            switch session.step(&switcher) {
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
