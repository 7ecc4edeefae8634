import Synchronization

/// The loudness stage's figures: written by the producer (a few times a second), read by
/// ``PushStats`` snapshots from any thread. Nil: the push does not normalise.
final class LoudnessFigures: Sendable {
    private let measured = Mutex<LoudnessStats?>(nil)

    var stats: LoudnessStats? { measured.withLock { $0 } }

    func set(_ stats: LoudnessStats) {
        measured.withLock { $0 = stats }
    }
}
