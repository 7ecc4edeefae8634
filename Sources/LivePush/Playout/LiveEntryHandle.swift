import Synchronization

/// A live entry's input as its own failover events see it: they come from inside the input
/// (its frame slots), which holds the closure, so the input is held weakly. Read on the
/// producer's thread, while the input makes the slot the event is about.
final class LiveEntryHandle: Sendable {
    private struct Reference {
        weak var input: FailoverInput?
    }

    private let reference = Mutex(Reference())

    func attach(_ input: FailoverInput) {
        reference.withLock { $0.input = input }
    }

    /// Seconds of the entry made so far: where the slot being made starts.
    var played: Double? {
        reference.withLock { $0.input?.played }
    }
}
