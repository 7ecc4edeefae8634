import Synchronization

/// Hands frames to a ``FrameDetector`` off the pipeline, newest frame only: the pipeline never
/// waits for the detector, and a slow detector skips frames instead of building a backlog.
///
/// Detection runs as jobs on the detector workers (``ConnectionWorkers/detecting``): a job
/// runs while a frame waits, so a detector holds no thread between frames.
final class DetectorTap: Sendable {
    private struct Slot {
        var pending: VideoFrame?
        var stopped = false
    }

    private let detector: any FrameDetector
    /// Where the frames it skipped are counted (``PipelineStats/detectorFramesSkipped``).
    private let figures: StageFigures
    private let slot = Mutex(Slot())
    private let drain = SerialDrain(on: .detecting)

    init(detector: any FrameDetector, figures: StageFigures = StageFigures()) {
        self.detector = detector
        self.figures = figures
    }

    var identity: ObjectIdentifier { ObjectIdentifier(detector) }

    /// Offers a frame; replaces one that is still waiting.
    func offer(_ frame: VideoFrame) {
        let taken = slot.withLock { slot -> Bool in
            guard !slot.stopped else { return false }
            if slot.pending != nil { figures.update { $0.detectorFramesSkipped += 1 } }
            slot.pending = frame
            return true
        }
        if taken { drain.offer { self.turn() } }
    }

    func stop() {
        slot.withLock { slot in
            slot.stopped = true
            // Offered but never detected: skipped too, so detected + skipped is every frame.
            if slot.pending != nil { figures.update { $0.detectorFramesSkipped += 1 } }
            slot.pending = nil
        }
    }

    /// One job's turn: the waiting frame, detected. A frame that came meanwhile gets a turn of
    /// its own, after other detectors' (the pool is shared).
    private func turn() -> DrainSchedule.Turn {
        let next = slot.withLock { slot -> VideoFrame? in
            defer { slot.pending = nil }
            return slot.pending
        }
        guard let next else { return .drained }
        detector.detect(next)
        return slot.withLock { $0.pending == nil } ? .drained : .more
    }
}
