import Synchronization

/// What a push's raw-frame stages measured (``PipelineStats``): written by its producer, read
/// by ``PushStats`` snapshots from any thread.
final class StageFigures: Sendable {
    private let measured = Mutex(PipelineStats())
    private let encoding = Atomic<Bool>(false)
    /// The loudness stage's figures (``PushStats/loudness``); nil stats: it does not normalise.
    let loudness = LoudnessFigures()

    var stats: PipelineStats { measured.withLock { $0 } }

    func update(_ body: (inout PipelineStats) -> Void) {
        measured.withLock { body(&$0) }
    }

    /// Whether the push decodes and encodes its video (so filters can apply); set when its
    /// input opens a video encoder.
    var encodesVideo: Bool { encoding.load(ordering: .relaxed) }

    func videoEncoderOpened() {
        encoding.store(true, ordering: .relaxed)
    }
}
