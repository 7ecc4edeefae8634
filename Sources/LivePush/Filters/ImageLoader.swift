import CFFmpeg

/// A decoded picture as straight (not premultiplied) 8-bit RGBA, rows tightly packed:
/// pixel (x, y) starts at `pixels[(y * width + x) * 4]`, in the order R, G, B, A.
public struct RGBAImage: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public var pixels: [UInt8]

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

/// Reads still images (pause image, watermark) with libavformat/libavcodec: PNG (with alpha),
/// JPEG, BMP, GIF, WebP, TIFF... anything FFmpeg decodes. For a video file the first picture is used.
enum ImageLoader {
    /// Larger pictures are refused: a pause image or a watermark never needs more, and a
    /// bogus header must not make us allocate gigabytes.
    static let maxSide = 16384

    /// Decodes `path` to straight RGBA. Throws `.imageOpenFailed` (with the path and libav's
    /// reason) for a missing/unreadable file, a file that is not an image, or an empty picture.
    static func loadRGBA(path: String) throws(LivePushError) -> RGBAImage {
        let decoded = try decodeFirstPicture(path: path)
        defer { var f: UnsafeMutablePointer<AVFrame>? = decoded; av_frame_free(&f) }
        let width = Int(decoded.pointee.width), height = Int(decoded.pointee.height)

        guard let rgba = av_frame_alloc() else { throw LivePushError(.outOfMemory, "av_frame_alloc") }
        defer { var f: UnsafeMutablePointer<AVFrame>? = rgba; av_frame_free(&f) }
        rgba.pointee.width = Int32(width)
        rgba.pointee.height = Int32(height)
        rgba.pointee.format = AV_PIX_FMT_RGBA.rawValue
        var rc = av_frame_get_buffer(rgba, 0)
        guard rc >= 0 else { throw LivePushError(.outOfMemory, "av_frame_get_buffer: \(FF.describe(rc))") }

        // Same size, so the scaler only converts (palette, YUV, 16-bit, gray+alpha... → RGBA).
        guard let sws = sws_getContext(Int32(width), Int32(height), AVPixelFormat(decoded.pointee.format),
                                       Int32(width), Int32(height), AV_PIX_FMT_RGBA,
                                       SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, nil, nil, nil) else {
            throw LivePushError(.imageOpenFailed, "\(path): cannot convert pixel format \(pixelFormatName(decoded.pointee.format)) to RGBA")
        }
        defer { sws_freeContext(sws) }
        rc = sws_scale(sws, FF.planes(decoded), FF.strides(decoded), 0, Int32(height), FF.mutablePlanes(rgba), FF.strides(rgba))
        guard rc == Int32(height) else {
            throw LivePushError(.imageOpenFailed, "\(path): converting to RGBA failed: \(FF.describe(rc))")
        }

        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        let rowBytes = width * 4
        let (base, stride) = (rgba.pointee.data.0!, Int(rgba.pointee.linesize.0))
        pixels.withUnsafeMutableBufferPointer { out in
            for y in 0..<height {
                (out.baseAddress! + y * rowBytes).update(from: base + y * stride, count: rowBytes)
            }
        }
        // Formats without alpha come out of swscale with A = 255 already.
        return RGBAImage(width: width, height: height, pixels: pixels)
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
        // RGB → limited-range BT.601 YUV (swscale's default for yuv420p), as the encoder expects.
        guard let sws = sws_getContext(Int32(image.width), Int32(image.height), AV_PIX_FMT_RGBA,
                                       Int32(fitW), Int32(fitH), AV_PIX_FMT_YUV420P,
                                       SWS_BICUBIC | SWS_ACCURATE_RND, nil, nil, nil) else {
            throw LivePushError(.imageOpenFailed, "\(path): cannot scale \(image.width)x\(image.height) to \(fitW)x\(fitH)")
        }
        defer { sws_freeContext(sws) }
        try frame.makeUnique()
        var dst: [UnsafeMutablePointer<UInt8>?] = [nil, nil, nil, nil]
        var dstLines: [Int32] = [0, 0, 0, 0]
        for plane in 0..<3 {
            let (base, stride) = frame.storage.plane(plane)
            let (x, y) = plane == 0 ? (offX, offY) : (offX / 2, offY / 2)
            dst[plane] = base.map { $0 + y * stride + x }
            dstLines[plane] = Int32(stride)
        }
        let rc = image.pixels.withUnsafeBufferPointer { src in
            var srcData: [UnsafePointer<UInt8>?] = [src.baseAddress, nil, nil, nil]
            var srcLines: [Int32] = [Int32(image.width * 4), 0, 0, 0]
            return sws_scale(sws, &srcData, &srcLines, 0, Int32(image.height), &dst, &dstLines)
        }
        guard rc > 0 else { throw LivePushError(.imageOpenFailed, "\(path): scaling failed: \(FF.describe(rc))") }
        return frame
    }

    // MARK: - Decoding

    /// The first picture of the first video stream, as a new AVFrame the caller frees.
    private static func decodeFirstPicture(path: String) throws(LivePushError) -> UnsafeMutablePointer<AVFrame> {
        let demuxer: FFDemuxer
        do {
            demuxer = try FFDemuxer(path: path)
        } catch {
            switch error.code {
            case .fileNotFound:
                throw LivePushError(.imageOpenFailed, "\(path.isEmpty ? "(empty path)" : path): no such readable file")
            case .notMedia: throw LivePushError(.imageOpenFailed, error.detail ?? path)
            default: throw LivePushError(.imageOpenFailed, "\(path): \(error.message)")
            }
        }
        guard let stream = demuxer.streams.first(where: { $0.mediaType == .video }),
              let parameters = demuxer.codecParameters(of: stream.index) else {
            throw LivePushError(.imageOpenFailed, "\(path): no picture in the file")
        }
        // ANSI/ASCII-art "video" (the tty demuxer) would render a text file as a picture.
        guard stream.codecID != AV_CODEC_ID_ANSI else {
            throw LivePushError(.imageOpenFailed, "\(path): a text file, not an image")
        }
        guard let codec = avcodec_find_decoder(stream.codecID) else {
            throw LivePushError(.imageOpenFailed, "\(path): no decoder for \(stream.codecName)")
        }
        var context = avcodec_alloc_context3(codec)
        guard let ctx = context else { throw LivePushError(.outOfMemory, "avcodec_alloc_context3") }
        defer { avcodec_free_context(&context) }
        var rc = avcodec_parameters_to_context(ctx, parameters)
        guard rc >= 0 else { throw LivePushError(.imageOpenFailed, "\(path): \(stream.codecName): \(FF.describe(rc))") }
        ctx.pointee.thread_count = 1
        rc = avcodec_open2(ctx, codec, nil)
        guard rc >= 0 else { throw LivePushError(.imageOpenFailed, "\(path): \(stream.codecName) decoder: \(FF.describe(rc))") }

        var frame = av_frame_alloc()
        guard let picture = frame else { throw LivePushError(.outOfMemory, "av_frame_alloc") }
        var lastError: Int32 = 0
        var packets = 0
        var sentEnd = false
        while true {
            rc = avcodec_receive_frame(ctx, picture)
            if rc >= 0 { break }
            if rc != FF.eagain && rc != FF.eof { lastError = rc }
            // Drained, or a damaged file that keeps the decoder hungry: give up.
            if rc == FF.eof || sentEnd || packets > 64 {
                av_frame_free(&frame)
                let reason = lastError != 0 ? FF.describe(lastError) : "no picture could be decoded"
                throw LivePushError(.imageOpenFailed, "\(path): \(stream.codecName): \(reason)")
            }
            let more: Bool
            do { more = try demuxer.read() } catch {
                av_frame_free(&frame)
                throw LivePushError(.imageOpenFailed, error.detail ?? path)
            }
            if !more {
                sentEnd = true
                _ = avcodec_send_packet(ctx, nil)
                continue
            }
            guard demuxer.packet.pointee.stream_index == stream.index else { continue }
            packets += 1
            rc = avcodec_send_packet(ctx, demuxer.packet)
            if rc < 0 && rc != FF.eagain { lastError = rc }
        }
        let w = Int(picture.pointee.width), h = Int(picture.pointee.height)
        guard w > 0, h > 0, w <= maxSide, h <= maxSide else {
            av_frame_free(&frame)
            throw LivePushError(.imageOpenFailed, "\(path): picture size \(w)x\(h) is empty or too large")
        }
        return picture
    }

    private static func pixelFormatName(_ format: Int32) -> String {
        av_get_pix_fmt_name(AVPixelFormat(format)).map { String(cString: $0) } ?? "\(format)"
    }
}
