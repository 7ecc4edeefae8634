import CFreeType

/// Renders one line of text to an ``RGBAImage`` with FreeType: the text's colour over an
/// optional background box. Called once per change of a text (and once a second for a clock),
/// never per frame. Each call uses a FreeType library and face of its own, made from the font's
/// bytes in memory (``FontFace``), so calls on different threads share nothing.
enum TextRasterizer {
    /// Renders `text` at `size` pixels. Throws `fontUnavailable` when no font can be loaded.
    static func render(_ text: String, size: Int, color: OverlayColor, background: OverlayColor?) throws(LivePushError) -> RGBAImage {
        let font = try FontFace.shared.get()
        var library: FT_Library?
        guard FT_Init_FreeType(&library) == 0, let library else { throw LivePushError(.fontUnavailable, "FreeType did not start") }
        defer { FT_Done_FreeType(library) }
        return try font.bytes.withUnsafeBufferPointer { (bytes) throws(LivePushError) -> RGBAImage in
            var face: FT_Face?
            guard FT_New_Memory_Face(library, bytes.baseAddress, FT_Long(bytes.count), 0, &face) == 0, let face else {
                throw LivePushError(.fontUnavailable, "FreeType cannot read \(font.path)")
            }
            defer { FT_Done_Face(face) }
            guard FT_Set_Pixel_Sizes(face, 0, FT_UInt(size)) == 0 else {
                throw LivePushError(.fontUnavailable, "\(font.path) has no size \(size)")
            }
            guard let image = draw(text, face: face, color: color, background: background, padding: background == nil ? 0 : max(2, size / 4)) else {
                throw LivePushError(.overlayInvalid, "the text is wider than \(maxWidth) pixels at size \(size)")
            }
            return image
        }
    }

    /// Widest text rendered, pixels (wider than any picture; bounds what a text costs in memory).
    static let maxWidth = 8192

    /// Glyph coverage on a canvas as tall as the font's line, then coloured; nil when wider than ``maxWidth``.
    private static func draw(_ text: String, face: FT_Face, color: OverlayColor, background: OverlayColor?, padding: Int) -> RGBAImage? {
        let metrics = face.pointee.size.pointee.metrics
        let ascender = Int(metrics.ascender >> 6), descender = Int(-(metrics.descender >> 6))
        let lineHeight = max(1, ascender + descender)
        // First pass: the pen's travel, to size the canvas.
        var glyphs: [(left: Int, top: Int, width: Int, rows: Int, pixels: [UInt8])] = []
        var pens: [Int] = []
        var pen = 0
        for scalar in text.unicodeScalars {
            guard FT_Load_Char(face, FT_ULong(scalar.value), FT_Int32(FT_LOAD_RENDER)) == 0 else { continue }
            let slot = face.pointee.glyph.pointee
            let bitmap = slot.bitmap
            let width = Int(bitmap.width), rows = Int(bitmap.rows), pitch = Int(bitmap.pitch)
            var pixels = [UInt8](repeating: 0, count: width * rows)
            if let buffer = bitmap.buffer, width > 0, rows > 0, bitmap.pixel_mode == UInt8(FT_PIXEL_MODE_GRAY.rawValue) {
                for row in 0..<rows {
                    let source = pitch >= 0 ? buffer + row * pitch : buffer + (rows - 1 - row) * -pitch
                    for column in 0..<width { pixels[row * width + column] = source[column] }
                }
            }
            glyphs.append((Int(slot.bitmap_left), Int(slot.bitmap_top), width, rows, pixels))
            pens.append(pen)
            pen += Int(slot.advance.x >> 6)
            if pen > maxWidth { return nil }
        }
        let left = min(0, zip(glyphs, pens).map { $0.0.left + $0.1 }.min() ?? 0)
        let right = max(pen, zip(glyphs, pens).map { $0.0.left + $0.1 + $0.0.width }.max() ?? 0)
        let width = max(1, right - left) + 2 * padding, height = lineHeight + 2 * padding
        guard width <= maxWidth + 2 * padding else { return nil }
        var coverage = [UInt8](repeating: 0, count: width * height)
        for (glyph, pen) in zip(glyphs, pens) {
            let x0 = padding + pen + glyph.left - left, y0 = padding + ascender - glyph.top
            for row in 0..<glyph.rows where (0..<height).contains(y0 + row) {
                for column in 0..<glyph.width where (0..<width).contains(x0 + column) {
                    let k = (y0 + row) * width + x0 + column
                    coverage[k] = max(coverage[k], glyph.pixels[row * glyph.width + column])
                }
            }
        }
        return colour(coverage, width: width, height: height, color: color, background: background)
    }

    /// The text's colour at each pixel's coverage, over the background ("over" compositing,
    /// straight alpha).
    static func colour(_ coverage: [UInt8], width: Int, height: Int, color: OverlayColor, background: OverlayColor?) -> RGBAImage {
        let back = background ?? OverlayColor(red: 0, green: 0, blue: 0, alpha: 0)
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        let fr = Int(color.red), fg = Int(color.green), fb = Int(color.blue), fa = Int(color.alpha)
        let br = Int(back.red), bg = Int(back.green), bb = Int(back.blue), ba = Int(back.alpha)
        for k in 0..<width * height {
            let ta = Int(coverage[k]) * fa / 255                  // text alpha, 0...255
            let under = ba * (255 - ta) / 255                     // background left visible
            let alpha = ta + under
            guard alpha > 0 else { continue }
            pixels[4 * k] = UInt8((fr * ta + br * under) / alpha)
            pixels[4 * k + 1] = UInt8((fg * ta + bg * under) / alpha)
            pixels[4 * k + 2] = UInt8((fb * ta + bb * under) / alpha)
            pixels[4 * k + 3] = UInt8(alpha)
        }
        return RGBAImage(width: width, height: height, pixels: pixels)
    }
}
