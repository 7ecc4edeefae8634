import CFFmpeg

/// libswscale into a reusable YUV420P picture of a fixed size: converts pixel formats the
/// filters or the encoder do not take, and scales to the output size.
final class FrameScaler {
    let width: Int32
    let height: Int32
    private var context: OpaquePointer?
    private let output: UnsafeMutablePointer<AVFrame>

    init(width: Int, height: Int) throws(LivePushError) {
        self.width = Int32(width)
        self.height = Int32(height)
        guard let frame = av_frame_alloc() else { throw LivePushError(.outOfMemory, "av_frame_alloc") }
        output = frame
    }

    deinit {
        var f: UnsafeMutablePointer<AVFrame>? = output
        av_frame_free(&f)
        sws_freeContext(context)
    }

    /// Whether `frame` already is a YUV420P picture of the output size.
    func fits(_ frame: UnsafePointer<AVFrame>) -> Bool {
        VideoFrame.PixelFormat(frame.pointee.format) == .i420 && frame.pointee.width == width && frame.pointee.height == height
    }

    /// `frame` converted; the result is valid until the next call. Bilinear: at live-encoding
    /// bitrates the difference from bicubic is invisible and it costs half as much.
    func scale(_ frame: UnsafePointer<AVFrame>) throws(LivePushError) -> UnsafeMutablePointer<AVFrame> {
        let f = frame.pointee
        context = sws_getCachedContext(context, f.width, f.height, AVPixelFormat(f.format),
                                       width, height, AV_PIX_FMT_YUV420P, SWS_BILINEAR, nil, nil, nil)
        guard let context else { throw LivePushError(.transcodeFailed, "no pixel format conversion from format \(f.format)") }
        // Someone still holds the last picture (a packet carries it to the renditions): a fresh
        // buffer, rather than av_frame_make_writable's copy of pixels about to be overwritten.
        if output.pointee.data.0 != nil && av_frame_is_writable(output) == 0 { av_frame_unref(output) }
        if output.pointee.data.0 == nil {
            output.pointee.format = AV_PIX_FMT_YUV420P.rawValue
            output.pointee.width = width
            output.pointee.height = height
            let rc = av_frame_get_buffer(output, 0)
            guard rc >= 0 else { throw LivePushError(.outOfMemory, "av_frame_get_buffer: \(FF.describe(rc))") }
        }
        // The encoder may still hold the previous picture.
        let rc = av_frame_make_writable(output)
        guard rc >= 0 else { throw LivePushError(.outOfMemory, "av_frame_make_writable: \(FF.describe(rc))") }
        let lines = sws_scale(context, FF.planes(frame), FF.strides(frame), 0, f.height,
                              FF.mutablePlanes(output), FF.strides(output))
        guard lines > 0 else { throw LivePushError(.transcodeFailed, "pixel format conversion failed") }
        output.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
        return output
    }
}
