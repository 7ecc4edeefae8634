import LivePush
import Synchronization

/// Paints a 64×64 checkerboard of 16-pixel squares (luma 235 and 16) into the top-left corner:
/// a pattern no test source contains, easy to find again in what the server recorded.
final class CheckerboardFilter: VideoFilter {
    static let size = 64
    static let square = 16

    func process(_ frame: inout VideoFrame) throws -> Bool {
        let rows = frame.planeSize(0).rows
        try frame.withMutablePlane(0) { luma in
            let stride = luma.count / rows  // after a copy-on-write the line size may differ
            for row in 0..<Self.size {
                for col in 0..<Self.size {
                    luma[row * stride + col] = (row / Self.square + col / Self.square) % 2 == 0 ? 235 : 16
                }
            }
        }
        return true
    }

    /// Whether decoded frame `index` shows the pattern (judged by the middle of each square,
    /// away from the edges the encoder blurs).
    static func isVisible(in video: DecodedVideo, frame index: Int) -> Bool {
        var matches = 0
        for row in 0..<(size / square) {
            for col in 0..<(size / square) {
                let mean = video.mean(index, x: col * square + 4, y: row * square + 4, w: square - 8, h: square - 8)
                let white = (row + col) % 2 == 0
                if white ? mean > 190 : mean < 60 { matches += 1 }
            }
        }
        return matches == (size / square) * (size / square)
    }
}

/// Passes frames through untouched and reports how many it has seen, so a test can act at a
/// given point of the stream.
final class FrameCounterFilter: VideoFilter {
    private let count = Mutex(0)
    let frames: AsyncStream<Int>
    private let continuation: AsyncStream<Int>.Continuation

    init() {
        (frames, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    func process(_ frame: inout VideoFrame) throws -> Bool {
        let n = count.withLock { n in
            n += 1
            return n
        }
        continuation.yield(n)
        return false
    }

    /// Frames that went through so far.
    var seen: Int { count.withLock { $0 } }

    /// Waits until at least `n` frames went through (bounded by the caller's task timeout).
    func awaitFrame(_ n: Int) async {
        for await seen in frames where seen >= n { return }
    }
}

/// Throws at its `failAt`-th frame; records its lifecycle.
final class FailingFilter: VideoFilter {
    struct Boom: Error, CustomStringConvertible { var description: String { "boom" } }
    let failAt: Int
    let log = Mutex<[String]>([])
    private let seen = Mutex(0)

    init(failAt: Int) { self.failAt = failAt }

    func create(format: VideoFormat) throws { log.withLock { $0.append("create \(format.width)x\(format.height)") } }

    func process(_ frame: inout VideoFrame) throws -> Bool {
        let n = seen.withLock { n in
            n += 1
            return n
        }
        if n == failAt { throw Boom() }
        return false
    }

    func destroy() { log.withLock { $0.append("destroy") } }
}

/// Simulates a filter too slow for real time.
final class SlowFilter: VideoFilter {
    let delay: Duration
    init(delay: Duration) { self.delay = delay }

    func process(_ frame: inout VideoFrame) throws -> Bool {
        let deadline = ContinuousClock.now + delay
        while ContinuousClock.now < deadline {}  // busy, like real pixel work
        return false
    }
}

/// Records what the detector saw: the top-left luma of every frame it received.
final class RecordingDetector: FrameDetector {
    let corners = Mutex<[UInt8]>([])

    func detect(_ frame: VideoFrame) {
        let corner = frame.withPlane(0) { $0[4 * frame.stride(ofPlane: 0) + 4] }
        corners.withLock { $0.append(corner) }
    }
}
