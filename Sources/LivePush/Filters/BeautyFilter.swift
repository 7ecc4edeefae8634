import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Skin smoothing and whitening on the luma plane of I420 and NV12 frames (chroma untouched).
///
/// Smoothing: a box blur of Y (radius about 1% of the shorter side), then each pixel moves
/// from its own value towards the blurred one by a weight that falls to zero as the two
/// differ more. Whitening: a logarithmic tone curve on Y, applied after smoothing.
///
/// Why this smoothing: a box blur with running sums costs the same per pixel whatever the
/// radius, and the per-pixel weight turns it into a cheap "surface blur": where the picture
/// is flat (skin, with sensor noise) a pixel is close to its neighbourhood mean and takes it;
/// at an edge or a detail (eyes, hair, lettering) the mean is far off and the pixel stays.
/// A guided filter gives slightly cleaner edges but needs four box filters instead of one,
/// and a bilateral filter is O(r²) per pixel: too slow next to a software encoder.
///
/// `strength` can be changed from any thread while the push runs; 0 turns the filter off
/// (frames pass through untouched, no work done).
public final class BeautyFilter: VideoFilter {
    public var name: String { "beauty" }

    private let level: Mutex<Double>
    private let scratch = Mutex(Scratch())

    /// 0 (off) ... 1 (strongest); values outside are clamped.
    public var strength: Double {
        get { level.withLock { $0 } }
        set { level.withLock { $0 = Self.clamp(newValue) } }
    }

    /// Creates a beauty filter; `strength` runs from 0 (off) to 1.
    public init(strength: Double = 0.5) {
        level = Mutex(Self.clamp(strength))
    }

    private static func clamp(_ value: Double) -> Double {
        value.isNaN ? 0 : min(1, max(0, value))
    }

    public func create(format: VideoFormat) throws {
        scratch.withLock { $0.resize(width: format.width, height: format.height) }
    }

    public func destroy() {
        scratch.withLock { $0 = Scratch() }
    }

    public func process(_ frame: inout VideoFrame) throws -> Bool {
        let strength = self.strength
        guard strength > 0 else { return false }
        let width = frame.width, height = frame.height
        try scratch.withLock { (s: inout Scratch) throws in
            s.resize(width: width, height: height)
            s.prepareCurve(strength: strength)
            try frame.withMutablePlane(0) { plane in
                // The line size is read here: a shared frame is copied first, maybe with another.
                s.run(plane.baseAddress!, stride: plane.count / height, strength: strength)
            }
        }
        return true
    }
}
