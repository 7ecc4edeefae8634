import Synchronization

/// Hands frames to a ``FrameDetector`` on a thread of its own, newest frame only: the
/// pipeline never waits for the detector, and a slow detector skips frames instead of
/// building a backlog.
final class DetectorTap: @unchecked Sendable {
    private let detector: any FrameDetector
    private let lock = ConditionLock()
    // Guarded by `lock`.
    private var pending: VideoFrame?
    private var stopped = false
    private(set) var skipped = 0

    init(detector: any FrameDetector) {
        self.detector = detector
        WorkerThread.start(name: "livepush.detector") { self.run() }
    }

    var identity: ObjectIdentifier { ObjectIdentifier(detector) }

    /// Offers a frame; replaces one that is still waiting.
    func offer(_ frame: VideoFrame) {
        lock.withLock {
            if pending != nil { skipped += 1 }
            pending = frame
            lock.broadcast()
        }
    }

    func stop() {
        lock.withLock {
            stopped = true
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
