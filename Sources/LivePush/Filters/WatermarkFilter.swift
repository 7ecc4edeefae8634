import Synchronization

/// Overlays an image (a PNG logo with transparency, or any picture `ImageLoader` reads) on
/// every frame, I420 or NV12, alpha-blended, at a corner, the centre or a given point.
///
/// The image is converted once per format (in `create(format:)`) to limited-range BT.601
/// Y/U/V, as libx264 and ffmpeg assume for yuv420p, with its alpha (times `opacity`) at full
/// resolution for luma and averaged over each 2×2 block for chroma. Chroma is averaged
/// weighted by alpha (premultiplied), so transparent pixels do not bleed their colour into
/// the edges of the logo. Only the overlay's rectangle, clipped to the picture, is touched.
public final class WatermarkFilter: VideoFilter {
    /// Where the watermark goes.
    public enum Position: Sendable, Equatable {
        /// The top left corner, `margin` from the edges.
        case topLeft
        /// The top right corner.
        case topRight
        /// The bottom left corner.
        case bottomLeft
        /// The bottom right corner.
        case bottomRight
        /// The middle of the picture.
        case center
        /// The overlay's top-left corner in picture pixels (rounded down to even numbers so
        /// that the image lines up with the chroma samples; `margin` is not applied).
        /// Parts outside the picture are clipped.
        case point(x: Int, y: Int)
    }

    public var name: String { "watermark" }
    /// The watermark's picture.
    public let image: RGBAImage
    /// Where it goes.
    public let position: Position
    /// Distance from the edges, pixels.
    public let margin: Int
    /// 0 (invisible) to 1 (opaque).
    public let opacity: Double

    private let prepared = Mutex<Overlay?>(nil)

    /// Loads the image now, so that a bad path fails here rather than during the push.
    /// `opacity` (0...1) multiplies the image's own alpha; `margin` is the distance in
    /// pixels from the picture's edges for the corner positions.
    public init(path: String, position: Position = .topRight, margin: Int = 16, opacity: Double = 1) throws(LivePushError) {
        image = try ImageLoader.loadRGBA(path: path)
        self.position = position
        self.margin = max(0, margin)
        self.opacity = opacity.isNaN ? 0 : min(1, max(0, opacity))
    }

    public func create(format: VideoFormat) throws {
        let overlay = Overlay(image: image, opacity: opacity, origin: origin(width: format.width, height: format.height),
                              width: format.width, height: format.height, pixelFormat: format.pixelFormat)
        prepared.withLock { $0 = overlay }
    }

    public func destroy() {
        prepared.withLock { $0 = nil }
    }

    public func process(_ frame: inout VideoFrame) throws -> Bool {
        try prepared.withLock { (overlay: inout Overlay?) throws -> Bool in
            if overlay?.matches(frame) != true {
                overlay = Overlay(image: image, opacity: opacity, origin: origin(width: frame.width, height: frame.height),
                                  width: frame.width, height: frame.height, pixelFormat: frame.pixelFormat)
            }
            guard let overlay, !overlay.isEmpty else { return false }
            try overlay.apply(to: &frame)
            return true
        }
    }

    /// Top-left corner of the overlay in the picture, both even.
    func origin(width: Int, height: Int) -> (x: Int, y: Int) {
        let right = width - margin - image.width, bottom = height - margin - image.height
        let (x, y): (Int, Int)
        switch position {
        case .topLeft: (x, y) = (margin, margin)
        case .topRight: (x, y) = (right, margin)
        case .bottomLeft: (x, y) = (margin, bottom)
        case .bottomRight: (x, y) = (right, bottom)
        case .center: (x, y) = ((width - image.width) / 2, (height - image.height) / 2)
        case let .point(px, py): (x, y) = (px, py)
        }
        return (x & ~1, y & ~1)  // rounds negative values down too
    }

    /// The image converted for one picture size and layout: for each plane, the rows of
    /// premultiplied overlay values (colour × weight) and of weights left for the picture
    /// (256 − weight), in 1/256, covering exactly the visible part of the overlay.
    struct Overlay {
        struct Plane {
            /// Where the rectangle starts in the plane (bytes), and its size.
            var x = 0, y = 0, bytes = 0, rows = 0
            var premultiplied: [UInt16] = []
            var remaining: [UInt16] = []
        }

        let width: Int, height: Int, pixelFormat: VideoFrame.PixelFormat
        /// Y, then U and V (I420) or the interleaved UV plane (NV12).
        private(set) var planes: [Plane] = []
        var isEmpty: Bool { planes.isEmpty }

        func matches(_ frame: VideoFrame) -> Bool {
            frame.width == width && frame.height == height && frame.pixelFormat == pixelFormat
        }

        init(image: RGBAImage, opacity: Double, origin: (x: Int, y: Int), width: Int, height: Int,
             pixelFormat: VideoFrame.PixelFormat) {
            self.width = width
            self.height = height
            self.pixelFormat = pixelFormat
            // Visible rectangle in luma pixels; origin is even, so x0, y0 are too.
            let x0 = max(origin.x, 0), y0 = max(origin.y, 0)
            let x1 = min(origin.x + image.width, width), y1 = min(origin.y + image.height, height)
            guard x1 > x0, y1 > y0, opacity > 0 else { return }
            let w = x1 - x0, h = y1 - y0
            let opacity256 = opacity * 256 / 255

            // Per luma pixel: weight in 1/256 and Y, U, V (BT.601, limited range).
            var alpha = [Int](repeating: 0, count: w * h)
            var yuv = [(y: Int, u: Int, v: Int)](repeating: (16, 128, 128), count: w * h)
            image.pixels.withUnsafeBufferPointer { px in
                for j in 0..<h {
                    for i in 0..<w {
                        let p = ((y0 - origin.y + j) * image.width + (x0 - origin.x + i)) * 4
                        let r = Double(px[p]), g = Double(px[p + 1]), b = Double(px[p + 2])
                        alpha[j * w + i] = Int((Double(px[p + 3]) * opacity256).rounded())
                        yuv[j * w + i] = (
                            Self.byte(16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255),
                            Self.byte(128 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255),
                            Self.byte(128 + (112.0 * r - 93.786 * g - 18.214 * b) / 255))
                    }
                }
            }
            var luma = Plane(x: x0, y: y0, bytes: w, rows: h)
            luma.premultiplied = (0..<w * h).map { UInt16(yuv[$0].y * alpha[$0]) }
            luma.remaining = alpha.map { UInt16(256 - $0) }

            // Chroma: each 2×2 block (pixels outside the visible part count as transparent).
            let cw = (w + 1) / 2, ch = (h + 1) / 2
            var cu = [UInt16](repeating: 0, count: cw * ch), cv = cu, cr = cu
            for cj in 0..<ch {
                for ci in 0..<cw {
                    var a = 0, u = 0, v = 0
                    for j in 2 * cj..<min(2 * cj + 2, h) {
                        for i in 2 * ci..<min(2 * ci + 2, w) {
                            let k = j * w + i
                            a += alpha[k]; u += alpha[k] * yuv[k].u; v += alpha[k] * yuv[k].v
                        }
                    }
                    // Σ(a·U)/4 = (mean a)·(alpha-weighted mean U), rounded.
                    cu[cj * cw + ci] = UInt16((u + 2) / 4)
                    cv[cj * cw + ci] = UInt16((v + 2) / 4)
                    cr[cj * cw + ci] = UInt16(256 - (a + 2) / 4)
                }
            }
            planes = [luma]
            if pixelFormat == .i420 {
                planes.append(Plane(x: x0 / 2, y: y0 / 2, bytes: cw, rows: ch, premultiplied: cu, remaining: cr))
                planes.append(Plane(x: x0 / 2, y: y0 / 2, bytes: cw, rows: ch, premultiplied: cv, remaining: cr))
            } else {
                var uv = [UInt16](repeating: 0, count: 2 * cw * ch), rr = uv
                for k in 0..<cw * ch {
                    uv[2 * k] = cu[k]; uv[2 * k + 1] = cv[k]
                    rr[2 * k] = cr[k]; rr[2 * k + 1] = cr[k]
                }
                planes.append(Plane(x: x0, y: y0 / 2, bytes: 2 * cw, rows: ch, premultiplied: uv, remaining: rr))
            }
        }

        private static func byte(_ value: Double) -> Int { Int(min(255, max(0, value.rounded()))) }

        func apply(to frame: inout VideoFrame) throws {
            for (index, plane) in planes.enumerated() {
                let rows = frame.planeSize(index).rows
                try frame.withMutablePlane(index) { buffer in
                    // A shared frame is copied first, maybe with another line size: read it here.
                    let stride = buffer.count / rows
                    plane.premultiplied.withUnsafeBufferPointer { pre in
                        plane.remaining.withUnsafeBufferPointer { rem in
                            for j in 0..<plane.rows {
                                Self.blend(buffer.baseAddress! + (plane.y + j) * stride + plane.x,
                                           pre.baseAddress! + j * plane.bytes, rem.baseAddress! + j * plane.bytes,
                                           plane.bytes)
                            }
                        }
                    }
                }
            }
        }

        /// dst = (dst·remaining + premultiplied + 128) / 256, 16 pixels at a time. Never
        /// reads or writes past `count` bytes of `dst` (the rest of the row is the picture).
        @inline(__always)
        private static func blend(_ dst: UnsafeMutablePointer<UInt8>, _ pre: UnsafePointer<UInt16>,
                                  _ rem: UnsafePointer<UInt16>, _ count: Int) {
            typealias V16 = SIMD16<UInt16>
            let half = V16(repeating: 128)
            var x = 0
            while x + 16 <= count {
                let d = V16(truncatingIfNeeded: UnsafeRawPointer(dst + x).loadUnaligned(as: SIMD16<UInt8>.self))
                let p = UnsafeRawPointer(pre + x).loadUnaligned(as: V16.self)
                let r = UnsafeRawPointer(rem + x).loadUnaligned(as: V16.self)
                let out = (d &* r &+ p &+ half) &>> 8
                UnsafeMutableRawPointer(dst + x).storeBytes(of: SIMD16<UInt8>(truncatingIfNeeded: out), as: SIMD16<UInt8>.self)
                x += 16
            }
            while x < count {
                dst[x] = UInt8(truncatingIfNeeded: (UInt32(dst[x]) * UInt32(rem[x]) + UInt32(pre[x]) + 128) >> 8)
                x += 1
            }
        }
    }
}
