/// A decoded picture as straight (not premultiplied) 8-bit RGBA, rows tightly packed:
/// pixel (x, y) starts at `pixels[(y * width + x) * 4]`, in the order R, G, B, A.
public struct RGBAImage: Sendable, Equatable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// RGBA bytes, row by row.
    public var pixels: [UInt8]

    /// Creates an image from its RGBA bytes.
    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width > 0 && height > 0 && pixels.count == width * height * 4, "RGBA \(width)x\(height), \(pixels.count) bytes")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// Whether any pixel is not fully opaque.
    public var hasTransparency: Bool {
        stride(from: 3, to: pixels.count, by: 4).contains { pixels[$0] != 255 }
    }
}

/// Reads still images (pause image, watermark) through the libav layer (``FFImage``): PNG (with alpha),
/// JPEG, BMP, GIF, WebP, TIFF... anything FFmpeg decodes. For a video file the first picture is used.
enum ImageLoader {
    /// Larger pictures are refused: a pause image or a watermark never needs more, and a
    /// bogus header must not make us allocate gigabytes.
    static let maxSide = 16384

    /// Decodes `path` to straight RGBA. Throws `.imageOpenFailed` (with the path and libav's
    /// reason) for a missing/unreadable file, a file that is not an image, or an empty picture.
    static func loadRGBA(path: String) throws(LivePushError) -> RGBAImage {
        try FFImage.decodeRGBA(path: path, maxSide: maxSide)
    }

    /// The image at `path` in a new black I420 frame of exactly `width` × `height` (positive,
    /// even). The picture is scaled to fit and centred with its aspect ratio kept (black bars
    /// on two sides when the ratios differ): a pause image must not look stretched. Transparent
    /// parts show the black background.
    static func loadFrame(path: String, width: Int, height: Int, timestamp: Int64 = 0) throws(LivePushError) -> VideoFrame {
        guard width > 0, height > 0, width % 2 == 0, height % 2 == 0, width <= maxSide, height <= maxSide else {
            throw LivePushError(.imageOpenFailed, "\(path): frame size \(width)x\(height) must be positive and even")
        }
        var image = try loadRGBA(path: path)
        if image.hasTransparency {
            // Composite over black (the background): colour × alpha, alpha → opaque.
            image.pixels.withUnsafeMutableBufferPointer { p in
                for i in stride(from: 0, to: p.count, by: 4) {
                    let a = UInt32(p[i + 3])
                    for c in 0..<3 { p[i + c] = UInt8((UInt32(p[i + c]) * a + 127) / 255) }
                    p[i + 3] = 255
                }
            }
        }
        // Largest even size with the image's aspect ratio that fits.
        var fitW = width, fitH = height
        if image.width * height > image.height * width {
            fitH = max(2, Int((Double(width) * Double(image.height) / Double(image.width) / 2).rounded()) * 2)
        } else {
            fitW = max(2, Int((Double(height) * Double(image.width) / Double(image.height) / 2).rounded()) * 2)
        }
        fitW = min(fitW, width); fitH = min(fitH, height)
        let offX = (width - fitW) / 2 & ~1, offY = (height - fitH) / 2 & ~1

        var frame = try VideoFrame(width: width, height: height, pixelFormat: .i420, timestamp: timestamp)
        try FFImage.draw(image, into: &frame, x: offX, y: offY, width: fitW, height: fitH, path: path)
        return frame
    }
}
