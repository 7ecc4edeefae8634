import CFFmpeg

/// Still pictures through libav (the libav side of ``ImageLoader``): the first picture of a
/// file as straight RGBA, and an RGBA image scaled into a rectangle of an I420 frame. It reuses
/// the demuxer, the decoder and swscale; everything above it sees only ``RGBAImage`` and
/// ``VideoFrame`` values.
enum FFImage {
    /// Decodes the first picture of `path` to straight RGBA. Pictures wider or taller than
    /// `maxSide` are refused. Throws `.imageOpenFailed` naming the path and libav's reason.
    static func decodeRGBA(path: String, maxSide: Int) throws(LivePushError) -> RGBAImage {
        let (demuxer, decoder) = try openFirstPicture(path: path, maxSide: maxSide)
        _ = demuxer  // the decoded picture may reference the demuxer's buffers until converted
        let decoded = decoder.frame
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

    /// Scales opaque `image` into the rectangle at (`x`, `y`) (even) of size `width` × `height`
    /// of the I420 `frame`, as limited-range BT.601 YUV (swscale's default, what the encoder expects).
    static func draw(_ image: RGBAImage, into frame: inout VideoFrame, x: Int, y: Int, width: Int, height: Int,
                     path: String) throws(LivePushError) {
        guard let sws = sws_getContext(Int32(image.width), Int32(image.height), AV_PIX_FMT_RGBA,
                                       Int32(width), Int32(height), AV_PIX_FMT_YUV420P,
                                       SWS_BICUBIC | SWS_ACCURATE_RND, nil, nil, nil) else {
            throw LivePushError(.imageOpenFailed, "\(path): cannot scale \(image.width)x\(image.height) to \(width)x\(height)")
        }
        defer { sws_freeContext(sws) }
        try frame.makeUnique()
        var dst: [UnsafeMutablePointer<UInt8>?] = [nil, nil, nil, nil]
        var dstLines: [Int32] = [0, 0, 0, 0]
        for plane in 0..<3 {
            let (base, stride) = frame.storage.plane(plane)
            let (px, py) = plane == 0 ? (x, y) : (x / 2, y / 2)
            dst[plane] = base.map { $0 + py * stride + px }
            dstLines[plane] = Int32(stride)
        }
        let rc = image.pixels.withUnsafeBufferPointer { src in
            var srcData: [UnsafePointer<UInt8>?] = [src.baseAddress, nil, nil, nil]
            var srcLines: [Int32] = [Int32(image.width * 4), 0, 0, 0]
            return sws_scale(sws, &srcData, &srcLines, 0, Int32(image.height), &dst, &dstLines)
        }
        guard rc > 0 else { throw LivePushError(.imageOpenFailed, "\(path): scaling failed: \(FF.describe(rc))") }
    }

    /// The first picture of the first video stream, in the returned decoder's `frame`.
    private static func openFirstPicture(path: String, maxSide: Int) throws(LivePushError) -> (FFDemuxer, FFDecoder) {
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
        let decoder: FFDecoder
        do {
            decoder = try FFDecoder(parameters: parameters, timeBase: stream.timeBase, threads: 1)
        } catch {
            throw LivePushError(.imageOpenFailed, "\(path): \(stream.codecName) decoder: \(error.detail ?? error.message)")
        }
        var packets = 0
        var sentEnd = false
        do throws(LivePushError) {
            // A damaged file that keeps the decoder hungry is given up after 64 packets.
            while try !decoder.receive() {
                guard !sentEnd, packets <= 64 else {
                    let reason = decoder.lastError != 0 ? FF.describe(decoder.lastError) : "no picture could be decoded"
                    throw LivePushError(.imageOpenFailed, "\(path): \(stream.codecName): \(reason)")
                }
                guard try demuxer.read() else {
                    sentEnd = true
                    try decoder.send(nil)
                    continue
                }
                guard demuxer.packet.pointee.stream_index == stream.index else { continue }
                packets += 1
                try decoder.send(demuxer.packet)
            }
        } catch where error.code == .imageOpenFailed {
            throw error
        } catch {
            throw LivePushError(.imageOpenFailed, "\(path): \(error.detail ?? error.message)")
        }
        let w = Int(decoder.frame.pointee.width), h = Int(decoder.frame.pointee.height)
        guard w > 0, h > 0, w <= maxSide, h <= maxSide else {
            throw LivePushError(.imageOpenFailed, "\(path): picture size \(w)x\(h) is empty or too large")
        }
        return (demuxer, decoder)
    }

    private static func pixelFormatName(_ format: Int32) -> String {
        av_get_pix_fmt_name(AVPixelFormat(format)).map { String(cString: $0) } ?? "\(format)"
    }
}
