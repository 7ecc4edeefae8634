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

    /// Buffers reused from frame to frame (allocated again only when the size changes), and
    /// the tone curve (rebuilt only when the strength changes).
    struct Scratch {
        private(set) var width = 0
        private(set) var height = 0
        /// Row length of the buffers: the width rounded up to whole SIMD vectors.
        private var paddedWidth = 0
        private(set) var radius = 0
        /// A copy of the original luma (paddedWidth × height): the blur reads rows the
        /// output has already replaced.
        private var source: [UInt8] = []
        /// Vertical running sums of 2·radius+1 source rows, per column.
        private var columns: [UInt16] = []
        /// One row of the box-blurred luma, and one of smoothed luma before the curve.
        private var blurred: [UInt8] = []
        private var smoothed: [UInt8] = []
        private var curve = [UInt8](repeating: 0, count: 256)
        private var curveStrength = -1.0

        mutating func resize(width: Int, height: Int) {
            guard width != self.width || height != self.height else { return }
            self.width = width
            self.height = height
            paddedWidth = (width + 15) / 16 * 16
            // ~1% of the shorter side: the scale of skin texture and noise at any resolution.
            radius = max(1, min(64, min(width, height) / 100))
            source = [UInt8](repeating: 0, count: paddedWidth * height)
            columns = [UInt16](repeating: 0, count: paddedWidth + 2 * radius + 2)
            blurred = [UInt8](repeating: 0, count: paddedWidth)
            smoothed = [UInt8](repeating: 0, count: paddedWidth)
        }

        /// Whitening: Y' = 16 + 219·log(1 + (β−1)·v) / log β with v = (Y−16)/219 and
        /// β = 1 + 1.5·strength. It lifts shadows and midtones more than highlights (skin
        /// brightens without clipping) and, for every Y, grows with strength. Outside the
        /// limited range (below 16, above 235) Y is kept, which keeps the curve monotonic.
        mutating func prepareCurve(strength: Double) {
            guard strength != curveStrength else { return }
            curveStrength = strength
            let beta = 1 + 1.5 * strength
            for y in 0..<256 {
                guard y > 16, y < 235 else { curve[y] = UInt8(y); continue }
                let v = Double(y - 16) / 219
                let lifted = log(1 + (beta - 1) * v) / log(beta)
                curve[y] = UInt8(min(235, max(Double(y), (16 + 219 * lifted).rounded())))
            }
        }

        /// Smooths and whitens the luma plane at `luma` in place.
        mutating func run(_ luma: UnsafeMutablePointer<UInt8>, stride: Int, strength: Double) {
            let width = self.width, height = self.height, padded = paddedWidth, r = radius
            // Blend weights, in 1/128: full weight (up to `maxWeight`) while |Y − mean| is
            // below half the threshold, falling linearly to 0 at the threshold. A stronger
            // setting smooths harder and also takes larger differences for noise.
            let threshold = Int16(12 + 28 * strength)
            let maxWeight = Int16(min(128, (128 * 1.4 * strength).rounded()))
            // ×8 for precision; (threshold − d)·slope stays below 2¹⁵.
            let slope = Int16(min(800, (16 * Double(maxWeight) / Double(threshold)).rounded()))
            let window = (2 * r + 1) * (2 * r + 1)
            let reciprocal = UInt32(((1 << 23) + window / 2) / window)

            source.withUnsafeMutableBufferPointer { src in
            columns.withUnsafeMutableBufferPointer { colPadded in
            blurred.withUnsafeMutableBufferPointer { blur in
            smoothed.withUnsafeMutableBufferPointer { out in
            curve.withUnsafeBufferPointer { lut in
                let src = src.baseAddress!, blur = blur.baseAddress!, out = out.baseAddress!, lut = lut.baseAddress!
                // Column sums of column x live at pad[r + 1 + x]; r + 1 copies of the first and
                // last column on either side stand for the picture's edge repeating.
                let pad = colPadded.baseAddress!, col = pad + r + 1
                for y in 0..<height {
                    (src + y * padded).update(from: luma + y * stride, count: width)
                }
                // Column sums for row 0: rows −r...r, the ones above the picture repeating row 0.
                col.update(repeating: 0, count: padded)
                Self.addRow(col, src, padded, times: r + 1)
                for i in 1...r { Self.addRow(col, src + min(i, height - 1) * padded, padded, times: 1) }

                for y in 0..<height {
                    if y > 0 {
                        Self.slide(col, add: src + min(y + r, height - 1) * padded,
                                   remove: src + max(y - r - 1, 0) * padded, padded)
                    }
                    pad.update(repeating: col[0], count: r + 1)
                    (col + width).update(repeating: col[width - 1], count: r + 1)
                    // Horizontal running sum over the column sums: the box mean of each pixel.
                    // Serial by nature, so kept to one add on the dependency chain per pixel.
                    var sum: UInt32 = 0
                    for i in 1...(2 * r + 1) { sum &+= UInt32(pad[i]) }
                    let ahead = pad + 2 * r + 2, behind = pad + 1
                    for x in 0..<width {
                        blur[x] = UInt8(truncatingIfNeeded: (sum &* reciprocal &+ (1 << 22)) &>> 23)
                        sum &+= UInt32(ahead[x]) &- UInt32(behind[x])
                    }
                    Self.blend(out, original: src + y * padded, mean: blur, padded,
                               threshold: threshold, slope: slope, maxWeight: maxWeight)
                    let row = luma + y * stride
                    for x in 0..<width { row[x] = lut[Int(out[x])] }
                }
            }}}}}
        }

        private typealias V8 = SIMD16<UInt8>
        private typealias V16 = SIMD16<UInt16>

        @inline(__always)
        private static func addRow(_ col: UnsafeMutablePointer<UInt16>, _ row: UnsafePointer<UInt8>, _ count: Int, times: Int) {
            let k = V16(repeating: UInt16(times))
            for x in Swift.stride(from: 0, to: count, by: 16) {
                let c = UnsafeMutableRawPointer(col + x)
                let v = V16(truncatingIfNeeded: UnsafeRawPointer(row + x).loadUnaligned(as: V8.self))
                c.storeBytes(of: c.loadUnaligned(as: V16.self) &+ v &* k, as: V16.self)
            }
        }

        @inline(__always)
        private static func slide(_ col: UnsafeMutablePointer<UInt16>, add: UnsafePointer<UInt8>,
                                  remove: UnsafePointer<UInt8>, _ count: Int) {
            for x in Swift.stride(from: 0, to: count, by: 16) {
                let c = UnsafeMutableRawPointer(col + x)
                let a = V16(truncatingIfNeeded: UnsafeRawPointer(add + x).loadUnaligned(as: V8.self))
                let b = V16(truncatingIfNeeded: UnsafeRawPointer(remove + x).loadUnaligned(as: V8.self))
                c.storeBytes(of: c.loadUnaligned(as: V16.self) &+ a &- b, as: V16.self)
            }
        }

        /// out = Y + (mean − Y)·w/128, w = min(maxWeight, (threshold − |Y − mean|)⁺·slope/8),
        /// with branch-free sign tricks (SSE2 has no 16-bit min/max for every signedness).
        @inline(__always)
        private static func blend(_ out: UnsafeMutablePointer<UInt8>, original: UnsafePointer<UInt8>,
                                  mean: UnsafePointer<UInt8>, _ count: Int,
                                  threshold: Int16, slope: Int16, maxWeight: Int16) {
            typealias S16 = SIMD16<Int16>
            let t = S16(repeating: threshold), k = S16(repeating: slope), wmax = S16(repeating: maxWeight)
            let rounding = S16(repeating: 64)
            for x in Swift.stride(from: 0, to: count, by: 16) {
                let y16 = S16(truncatingIfNeeded: UnsafeRawPointer(original + x).loadUnaligned(as: V8.self))
                let m16 = S16(truncatingIfNeeded: UnsafeRawPointer(mean + x).loadUnaligned(as: V8.self))
                let diff = m16 &- y16
                let sign = diff &>> 15
                let d = (diff ^ sign) &- sign                           // |diff|
                let rt = t &- d
                let room = rt & ~(rt &>> 15)                            // max(t − d, 0)
                let e = ((room &* k) &>> 3) &- wmax
                let w = wmax &+ (e & (e &>> 15))                        // min(·, wmax)
                let result = y16 &+ ((diff &* w &+ rounding) &>> 7)
                UnsafeMutableRawPointer(out + x).storeBytes(of: V8(truncatingIfNeeded: result), as: V8.self)
            }
        }
    }
}
