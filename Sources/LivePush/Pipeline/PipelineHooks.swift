import Synchronization

/// The live controls a ``LivePusher`` shares with the media pipeline of its pushes: the
/// filter chain, the detector, the encoder's bitrate and the pause image. They outlive a
/// single push (filters added before `start` apply to it), and every member is safe to use
/// from the app's threads while the pipeline thread reads it.
final class PipelineHooks: Sendable {
    let filters = FilterChain()
    private let detectorTap = Mutex<DetectorTap?>(nil)
    /// Bitrate (bit/s) the video encoder should switch to at its next frame; 0 = no request.
    private let bitrateRequest = Atomic<Int>(0)
    /// Where the pipeline reports (filter lifecycle, low performance).
    private let sink = Mutex<(@Sendable (PushEvent) -> Void)?>(nil)

    init() {}

    func setReporter(_ report: (@Sendable (PushEvent) -> Void)?) {
        sink.withLock { $0 = report }
    }

    func report(_ event: PushEvent) {
        sink.withLock { $0 }?(event)
    }

    // MARK: Detector

    var detector: DetectorTap? { detectorTap.withLock { $0 } }

    func setDetector(_ detector: (any FrameDetector)?) {
        let old = detectorTap.withLock { tap -> DetectorTap? in
            let old = tap
            tap = detector.map { DetectorTap(detector: $0) }
            return old
        }
        old?.stop()
    }

    // MARK: Bitrate

    func requestBitrate(_ bitsPerSecond: Int) {
        bitrateRequest.store(bitsPerSecond, ordering: .relaxed)
    }

    /// The pending request, cleared.
    func takeBitrateRequest() -> Int? {
        let value = bitrateRequest.exchange(0, ordering: .relaxed)
        return value > 0 ? value : nil
    }
}
