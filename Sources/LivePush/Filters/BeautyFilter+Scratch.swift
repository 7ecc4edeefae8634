#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension BeautyFilter {
    /// Buffers reused from frame to frame (allocated again only when the size changes), and
    /// the tone curve (rebuilt only when the strength changes).
    ///
    /// The blur runs at half resolution. Each 2×2 block of luma is averaged into a quarter-size
    /// plane, that plane is box-blurred with half the radius, and the blend reads the blurred
    /// value back with a 2× bilinear upsample. Why: the mean of a 15×15 window hardly differs
    /// from the mean of a 7×7 window of 2×2 block means (both are low-pass far below the
    /// scale of skin texture), but the blur then touches 4× fewer pixels, and at half the radius
    /// the horizontal window is short enough to sum with shifted vector loads instead of a
    /// serial running sum (the old bottleneck). Edges stay sharp because the edge-preserving
    /// weight still compares each full-resolution pixel with that mean: next to an edge the
    /// mean is far off and the pixel keeps its value. Since the blurred plane is complete
    /// before any luma is written, the luma no longer needs copying either: the last pass
    /// upsamples, blends and applies the tone curve in place, one row at a time.
    ///
    /// The vector code reads two neighbouring 8-bit pixels as one little-endian UInt16 lane
    /// (low byte = even x, high byte = odd x): that splits even and odd columns, and packs them
    /// back, without shuffles, which Swift's SIMD types do not offer.
    struct Scratch {
        private(set) var width = 0
        private(set) var height = 0
        /// Size of the half-resolution plane (odd sizes round up, repeating the last pixel).
        private var halfWidth = 0
        private var halfHeight = 0
        /// Row length of the half-resolution buffers: halfWidth rounded up to whole vectors.
        private var halfPadded = 0
        /// Blur radius at full resolution (~1% of the shorter side), and the half-resolution
        /// radius whose window 2·(2·halfRadius + 1) is closest to 2·radius + 1 pixels (0 for
        /// radius 1, small pictures: the 2×2 block means alone, spread by the upsampling).
        private(set) var radius = 0
        private(set) var halfRadius = 0
        /// 2×2 block means of the luma (halfPadded × halfHeight).
        private var half: [UInt8] = []
        /// Box-blurred `half` (halfPadded × halfHeight).
        private var blurred: [UInt8] = []
        /// Vertical running sums of 2·halfRadius+1 half rows, per column, with halfRadius
        /// columns of margin on either side.
        private var columns: [UInt16] = []
        /// One row of `blurred` interpolated vertically to a full-resolution row (×4), with one
        /// column of margin on either side for the horizontal interpolation.
        private var between: [UInt16] = []
        /// Two rows of 32 bytes for the ends of rows that do not fill a whole vector.
        private var tail = [UInt8](repeating: 0, count: 64)
        /// Tone curve coefficients (see `prepareCurve`).
        private var curve: (a: Int16, b: Int16, c: Int16) = (0, 0, 0)
        private var curveStrength = -1.0

        mutating func resize(width: Int, height: Int) {
            guard width != self.width || height != self.height else { return }
            self.width = width
            self.height = height
            halfWidth = (width + 1) / 2
            halfHeight = (height + 1) / 2
            halfPadded = (halfWidth + 15) / 16 * 16
            // ~1% of the shorter side: the scale of skin texture and noise at any resolution.
            radius = max(1, min(64, min(width, height) / 100))
            halfRadius = (2 * radius + 1) / 4
            half = [UInt8](repeating: 0, count: halfPadded * halfHeight)
            blurred = [UInt8](repeating: 0, count: halfPadded * halfHeight)
            columns = [UInt16](repeating: 0, count: halfPadded + 2 * halfRadius + 16)
            between = [UInt16](repeating: 0, count: halfPadded + 32)
        }

        /// Whitening: Y' = 16 + 219·log(1 + (β−1)·v) / log β with v = (Y−16)/219 and
        /// β = 1 + 1.5·strength. It lifts shadows and midtones more than highlights (skin
        /// brightens without clipping) and, for every Y, grows with strength. Outside the
        /// limited range (below 16, above 235) Y is kept, which keeps the curve monotonic.
        ///
        /// Evaluated in the vector blend rather than by a table: a byte lookup per pixel cost
        /// more than everything else together. The lift L(Y) = Y' − Y is 0 at 16 and at 235, so
        /// it is written L = (Y − 16)·(235 − Y)·P(Y) with P a quadratic interpolating the exact
        /// P at three Chebyshev nodes; in 16-bit fixed point this stays within one level of the
        /// rounded formula (off by one for about 2% of the (Y, strength) pairs), is monotonic
        /// in Y, never exceeds 235, and is 0 (Y kept) outside 16...235 where (Y − 16)·(235 − Y)
        /// is negative. Fixed point: P is scaled by 2²², and `tone` computes
        /// P = a + (Y·2⁷·(b + Y·2⁷·c / 2¹⁶) / 2¹⁶), L·2⁷ = 2·(Y − 16)·(235 − Y)·P / 2¹⁶.
        mutating func prepareCurve(strength: Double) {
            guard strength != curveStrength else { return }
            curveStrength = strength
            let beta = 1 + 1.5 * strength
            let p = { (y: Double) -> Double in
                let u = y - 16
                return (219 * log(1 + (beta - 1) * u / 219) / log(beta) - u) / (u * (235 - y))
            }
            // Chebyshev nodes of [17, 234].
            let x = (0..<3).map { 125.5 + 108.5 * cos(Double.pi * Double(2 * $0 + 1) / 6) }
            let l = (0..<3).map { i in p(x[i]) / (0..<3).filter { $0 != i }.reduce(1.0) { $0 * (x[i] - x[$1]) } }
            let c2 = l[0] + l[1] + l[2]
            let c1 = -(l[0] * (x[1] + x[2]) + l[1] * (x[0] + x[2]) + l[2] * (x[0] + x[1]))
            let c0 = l[0] * x[1] * x[2] + l[1] * x[0] * x[2] + l[2] * x[0] * x[1]
            let scale = Double(1 << 22)
            let fixed = { (v: Double) in Int16(clamping: Int(v.rounded())) }
            curve = (fixed(c0 * scale), fixed(c1 * scale * 512), fixed(c2 * scale * 512 * 512))
        }

        /// Smooths and whitens the luma plane at `luma` in place.
        mutating func run(_ luma: UnsafeMutablePointer<UInt8>, stride: Int, strength: Double) {
            let width = self.width, height = self.height
            let hw = halfWidth, hh = halfHeight, hp = halfPadded, r = halfRadius
            // Blend weights, in 1/128: full weight (up to `maxWeight`) while |Y − mean| is
            // below half the threshold, falling linearly to 0 at the threshold. A stronger
            // setting smooths harder and also takes larger differences for noise.
            let threshold = Int16(12 + 28 * strength)
            let maxWeight = Int16(min(128, (128 * 1.4 * strength).rounded()))
            // ×8 for precision; (threshold − d)·slope stays below 2¹⁵.
            let slope = Int16(min(800, (16 * Double(maxWeight) / Double(threshold)).rounded()))
            let window = (2 * r + 1) * (2 * r + 1)
            let reciprocal = UInt32(((1 << 23) + window / 2) / window)
            // The same rounded division in 16 bits while the window sum fits (up to r = 7, so
            // 1440p and below): sum + window/2 times ⌈2^(16+k)/window⌉, the high half shifted
            // right by k, with k as large as keeps the factor in 16 bits. Exact for every sum
            // of 8-bit pixels for these windows (checked exhaustively, r = 1...7).
            var shift = 0
            while ((1 << (17 + shift)) + window - 1) / window <= 0xFFFF { shift += 1 }
            let narrow = r >= 1 && window * 255 + window / 2 <= 0xFFFF
            let factor = UInt16(truncatingIfNeeded: ((1 << (16 + shift)) + window - 1) / window)
            let params = Params(threshold: threshold, slope: slope, maxWeight: maxWeight, curve: curve)

            half.withUnsafeMutableBufferPointer { half in
            blurred.withUnsafeMutableBufferPointer { blurred in
            columns.withUnsafeMutableBufferPointer { colPadded in
            between.withUnsafeMutableBufferPointer { between in
            tail.withUnsafeMutableBufferPointer { tail in
                let half = half.baseAddress!, blurred = blurred.baseAddress!
                let tailA = tail.baseAddress!, tailB = tailA + 32

                // 1. 2×2 block means. An odd last column or row repeats the one before it.
                for j in 0..<hh {
                    let a = luma + 2 * j * stride, b = luma + min(2 * j + 1, height - 1) * stride
                    let out = half + j * hp
                    var x = 0
                    while x &+ 32 <= width {
                        Self.store(Self.average2x2(a + x, b + x), out + (x &>> 1))
                        x &+= 32
                    }
                    if x < width {
                        let n = width &- x
                        tailA.update(from: a + x, count: n)
                        (tailA + n).update(repeating: tailA[n &- 1], count: 32 &- n)
                        tailB.update(from: b + x, count: n)
                        (tailB + n).update(repeating: tailB[n &- 1], count: 32 &- n)
                        Self.store(Self.average2x2(tailA, tailB), out + (x &>> 1))
                    }
                }

                // 2. Box blur of the half plane: vertical running sums per column, then the
                // horizontal window summed from shifted loads (2·r + 1 vector adds per 16 pixels).
                // Column sums of column i live at pad[r + i]; the r columns either side repeat
                // the first and last column (the picture's edge repeating).
                let pad = colPadded.baseAddress!, col = pad + r
                col.update(repeating: 0, count: hp)
                Self.addRow(col, half, hp, times: UInt16(r + 1))
                for i in Swift.stride(from: 1, through: r, by: 1) { Self.addRow(col, half + min(i, hh - 1) * hp, hp, times: 1) }
                for j in 0..<hh {
                    if j > 0 {
                        Self.slide(col, add: half + min(j + r, hh - 1) * hp,
                                   remove: half + max(j - r - 1, 0) * hp, hp)
                    }
                    pad.update(repeating: col[0], count: r)
                    (col + hw).update(repeating: col[hw - 1], count: hp - hw + r)
                    if narrow {
                        Self.boxRow16(blurred + j * hp, col - r, hp, taps: 2 * r + 1, factor: factor,
                                      shift: UInt16(shift), half: UInt16(window / 2))
                    } else {
                        Self.boxRow(blurred + j * hp, col - r, hp, taps: 2 * r + 1, reciprocal: reciprocal)
                    }
                }

                // 3. Per full-resolution row: bilinear 2× upsample of the blurred plane, blend,
                // tone curve. Half-resolution sample i sits at full-resolution x = 2i + ½, so
                // row 2j takes ¾ of half row j and ¼ of row j − 1, row 2j + 1 ¾ of j and ¼ of
                // j + 1 (edges repeat); the same horizontally.
                let mid = between.baseAddress! + 1
                for y in 0..<height {
                    let j = y / 2
                    let near = blurred + j * hp
                    let far = blurred + (y & 1 == 0 ? max(j - 1, 0) : min(j + 1, hh - 1)) * hp
                    Self.interpolateRows(mid, near, far, hp)
                    mid[-1] = mid[0]
                    mid[hw] = mid[hw - 1]
                    let row = luma + y * stride
                    var x = 0
                    while x &+ 32 <= width {
                        Self.blend(row + x, mid + (x &>> 1), params)
                        x &+= 32
                    }
                    if x < width {
                        let n = width &- x
                        tailA.update(from: row + x, count: n)
                        Self.blend(tailA, mid + (x &>> 1), params)
                        (row + x).update(from: tailA, count: n)
                    }
                }
            }}}}}
        }

        private typealias V8 = SIMD16<UInt8>
        private typealias V16 = SIMD16<UInt16>
        private typealias S16 = SIMD16<Int16>
        private typealias V32 = SIMD16<UInt32>

        // Conversions between vector types, written so that they compile to a few instructions:
        // SIMD16's generic init(truncatingIfNeeded:) is not inlined and costs a call per vector.
        @inline(__always)
        private static func widen(_ v: V8) -> V16 {
            var r = V16()
            for i in 0..<16 { r[i] = UInt16(v[i]) }
            return r
        }

        /// Lanes must be 0...255.
        @inline(__always)
        private static func narrow(_ v: V16) -> V8 {
            var r = V8()
            for i in 0..<16 { r[i] = UInt8(truncatingIfNeeded: v[i]) }
            return r
        }

        @inline(__always)
        private static func signed(_ v: V16) -> S16 { unsafeBitCast(v, to: S16.self) }

        @inline(__always)
        private static func unsigned(_ v: S16) -> V16 { unsafeBitCast(v, to: V16.self) }

        @inline(__always)
        private static func store(_ v: V8, _ to: UnsafeMutablePointer<UInt8>) {
            UnsafeMutableRawPointer(to).storeBytes(of: v, as: V8.self)
        }

        /// Means of the 16 2×2 blocks in 32 columns of rows `a` and `b`, rounded.
        @inline(__always)
        private static func average2x2(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>) -> V8 {
            let p = UnsafeRawPointer(a).loadUnaligned(as: V16.self)
            let q = UnsafeRawPointer(b).loadUnaligned(as: V16.self)
            let low = V16(repeating: 0xFF)
            let sum = (p & low) &+ (p &>> 8) &+ (q & low) &+ (q &>> 8) &+ 2
            return narrow(sum &>> 2)
        }

        @inline(__always)
        private static func addRow(_ col: UnsafeMutablePointer<UInt16>, _ row: UnsafePointer<UInt8>, _ count: Int, times: UInt16) {
            let k = V16(repeating: times)
            for x in Swift.stride(from: 0, to: count, by: 16) {
                let c = UnsafeMutableRawPointer(col + x)
                let v = widen(UnsafeRawPointer(row + x).loadUnaligned(as: V8.self))
                c.storeBytes(of: c.loadUnaligned(as: V16.self) &+ v &* k, as: V16.self)
            }
        }

        @inline(__always)
        private static func slide(_ col: UnsafeMutablePointer<UInt16>, add: UnsafePointer<UInt8>,
                                  remove: UnsafePointer<UInt8>, _ count: Int) {
            for x in Swift.stride(from: 0, to: count, by: 16) {
                let c = UnsafeMutableRawPointer(col + x)
                let a = widen(UnsafeRawPointer(add + x).loadUnaligned(as: V8.self))
                let b = widen(UnsafeRawPointer(remove + x).loadUnaligned(as: V8.self))
                c.storeBytes(of: c.loadUnaligned(as: V16.self) &+ a &- b, as: V16.self)
            }
        }

        /// out[i] = mean of sums[i ..< i + taps] / taps (the window's column sums), rounded.
        @inline(__always)
        private static func boxRow(_ out: UnsafeMutablePointer<UInt8>, _ sums: UnsafePointer<UInt16>, _ count: Int,
                                   taps: Int, reciprocal: UInt32) {
            let k = V32(repeating: reciprocal), rounding = V32(repeating: 1 << 22)
            for x in Swift.stride(from: 0, to: count, by: 16) {
                var total = V32(repeating: 0)
                var t = 0
                while t < taps {
                    let v = UnsafeRawPointer(sums + x + t).loadUnaligned(as: V16.self)
                    for i in 0..<16 { total[i] &+= UInt32(v[i]) }
                    t &+= 1
                }
                let mean = (total &* k &+ rounding) &>> 23
                var narrowed = V8()
                for i in 0..<16 { narrowed[i] = UInt8(truncatingIfNeeded: mean[i]) }
                store(narrowed, out + x)
            }
        }

        /// `boxRow` with 16-bit sums, for windows whose sums fit.
        @inline(__always)
        private static func boxRow16(_ out: UnsafeMutablePointer<UInt8>, _ sums: UnsafePointer<UInt16>, _ count: Int,
                                     taps: Int, factor: UInt16, shift: UInt16, half: UInt16) {
            let m = V16(repeating: factor), k = V16(repeating: shift)
            for x in Swift.stride(from: 0, to: count, by: 16) {
                var total = V16(repeating: half)
                var t = 0
                while t < taps {
                    total &+= UnsafeRawPointer(sums + x + t).loadUnaligned(as: V16.self)
                    t &+= 1
                }
                var high = V16()
                for i in 0..<16 { high[i] = UInt16(truncatingIfNeeded: (UInt32(total[i]) &* UInt32(m[i])) &>> 16) }
                store(narrow(high &>> k), out + x)
            }
        }

        /// out[i] = 3·near[i] + far[i]: a full-resolution row between two half rows, ×4.
        @inline(__always)
        private static func interpolateRows(_ out: UnsafeMutablePointer<UInt16>, _ near: UnsafePointer<UInt8>,
                                            _ far: UnsafePointer<UInt8>, _ count: Int) {
            for x in Swift.stride(from: 0, to: count, by: 16) {
                let n = widen(UnsafeRawPointer(near + x).loadUnaligned(as: V8.self))
                let f = widen(UnsafeRawPointer(far + x).loadUnaligned(as: V8.self))
                UnsafeMutableRawPointer(out + x).storeBytes(of: n &* 3 &+ f, as: V16.self)
            }
        }

        /// The per-frame constants of `blend`, as vectors.
        private struct Params {
            let threshold, slope, maxWeight, a, b, c: S16
            init(threshold: Int16, slope: Int16, maxWeight: Int16, curve: (a: Int16, b: Int16, c: Int16)) {
                self.threshold = S16(repeating: threshold)
                self.slope = S16(repeating: slope)
                self.maxWeight = S16(repeating: maxWeight)
                (a, b, c) = (S16(repeating: curve.a), S16(repeating: curve.b), S16(repeating: curve.c))
            }
        }

        /// 32 pixels at `pixels` in place: the mean of each comes from `between` (16 samples
        /// from `between[0]`, with `between[-1]` and `between[16]` as neighbours), then
        /// Y + (mean − Y)·w/128, w = min(maxWeight, (threshold − |Y − mean|)⁺·slope/8),
        /// with branch-free sign tricks, then the tone curve.
        @inline(__always)
        private static func blend(_ pixels: UnsafeMutablePointer<UInt8>, _ between: UnsafePointer<UInt16>,
                                  _ params: Params) {
            let centre = UnsafeRawPointer(between).loadUnaligned(as: V16.self) &* 3 &+ 8
            let left = UnsafeRawPointer(between - 1).loadUnaligned(as: V16.self)
            let right = UnsafeRawPointer(between + 1).loadUnaligned(as: V16.self)
            let evenMean = signed((centre &+ left) &>> 4)
            let oddMean = signed((centre &+ right) &>> 4)
            let packed = UnsafeRawPointer(pixels).loadUnaligned(as: V16.self)
            let even = tone(weigh(signed(packed & 0xFF), evenMean, params), params)
            let odd = tone(weigh(signed(packed &>> 8), oddMean, params), params)
            let result = unsigned(even) | (unsigned(odd) &<< 8)
            UnsafeMutableRawPointer(pixels).storeBytes(of: result, as: V16.self)
        }

        @inline(__always)
        private static func weigh(_ y: S16, _ mean: S16, _ params: Params) -> S16 {
            let t = params.threshold, k = params.slope, wmax = params.maxWeight
            let diff = mean &- y
            let sign = diff &>> 15
            let d = (diff ^ sign) &- sign                           // |diff|
            let rt = t &- d
            let room = rt & ~(rt &>> 15)                            // max(t − d, 0)
            let e = ((room &* k) &>> 3) &- wmax
            let w = wmax &+ (e & (e &>> 15))                        // min(·, wmax)
            return y &+ ((diff &* w &+ 64) &>> 7)                   // 0...255
        }

        /// The high 16 bits of the signed products: one instruction per 8 lanes (pmulhw, smull
        /// + shrn). Written lane by lane because the widening SIMD16<Int32> conversion is not
        /// inlined and hides the pattern from LLVM; this loop becomes two pmulhw.
        @inline(__always)
        private static func mulhi(_ x: S16, _ y: S16) -> S16 {
            var r = S16()
            for i in 0..<16 { r[i] = Int16(truncatingIfNeeded: (Int32(x[i]) &* Int32(y[i])) &>> 16) }
            return r
        }

        /// The tone curve of `prepareCurve` on Y in 0...255.
        @inline(__always)
        private static func tone(_ y: S16, _ params: Params) -> S16 {
            let q = ((y &- 16) &* (235 &- y)) &<< 1                 // 2·(Y − 16)·(235 − Y), < 2¹⁵
            let y7 = y &<< 7
            let p = params.a &+ mulhi(y7, params.b &+ mulhi(y7, params.c))
            let lift = (mulhi(q, p) &+ 64) &>> 7
            return y &+ (lift & ~(lift &>> 15))                     // max(lift, 0)
        }
    }
}
