import Synchronization

/// An ``OpusStage``'s figures: written by the producer, read by stats snapshots.
final class OpusFigures: Sendable {
    private let encoded = Atomic<Int>(0)

    /// Opus frames (20 ms each) encoded so far.
    var framesEncoded: Int { encoded.load(ordering: .relaxed) }

    func add(_ frames: Int) {
        guard frames > 0 else { return }
        encoded.add(frames, ordering: .relaxed)
    }
}
