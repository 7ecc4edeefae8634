import Synchronization

/// Hands frames to a ``FrameDetector`` on a thread of its own, newest frame only: the
/// pipeline never waits for the detector, and a slow detector skips frames instead of
/// building a backlog.
final class DetectorTap: @unchecked Sendable {
    private let detector: any FrameDetector
    /// Where the frames it skipped are counted (``PipelineStats/detectorFramesSkipped``).
    private let figures: StageFigures
    private let lock = ConditionLock()
    // Guarded by `lock`.
    private var pending: VideoFrame?
    private var stopped = false

    init(detector: any FrameDetector, figures: StageFigures = StageFigures()) {
        self.detector = detector
        self.figures = figures
        WorkerThread.start(name: "livepush.detector") { self.run() }
    }

    var identity: ObjectIdentifier { ObjectIdentifier(detector) }

    /// Offers a frame; replaces one that is still waiting.
    func offer(_ frame: VideoFrame) {
        lock.withLock {
            if pending != nil { figures.update { $0.detectorFramesSkipped += 1 } }
            pending = frame
            lock.broadcast()
        }
    }

    func stop() {
        lock.withLock {
            stopped = true
            // Offered but never detected: skipped too, so detected + skipped is every frame.
            if pending != nil { figures.update { $0.detectorFramesSkipped += 1 } }
            pending = nil
            lock.broadcast()
        }
    }

    private func run() {
        while true {
            let next = lock.withLock { () -> VideoFrame? in
                while pending == nil && !stopped { lock.wait() }
                defer { pending = nil }
                return stopped ? nil : pending
            }
            guard let next else { return }
            detector.detect(next)
        }
    }
}
