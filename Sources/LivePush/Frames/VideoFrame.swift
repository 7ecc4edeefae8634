import CFFmpeg

/// One raw picture on its way from the decoder to the encoder: what video filters and
/// detectors see.
///
/// A value that wraps the decoded `AVFrame` without copying it. Reading is free; the first
/// write (``withMutablePlane(_:_:)``) copies the pixels only if someone else (the decoder,
/// a detector, another copy of this value) still holds them.
public struct VideoFrame: Sendable {
    /// The layouts filters can rely on. Decoded pictures in any other layout are converted
    /// to I420 before the filter chain.
    public enum PixelFormat: Sendable, Equatable, CustomStringConvertible {
        /// Planar Y, U, V; chroma halved both ways (`AV_PIX_FMT_YUV420P`, also full-range YUVJ420P).
        case i420
        /// Planar Y, then one plane of interleaved U/V pairs, chroma halved both ways.
        case nv12

        /// 3 for I420, 2 for NV12.
        public var planeCount: Int { self == .i420 ? 3 : 2 }

        public var description: String { self == .i420 ? "I420" : "NV12" }

        var avFormat: AVPixelFormat { self == .i420 ? AV_PIX_FMT_YUV420P : AV_PIX_FMT_NV12 }

        init?(_ format: Int32) {
            switch format {
            case AV_PIX_FMT_YUV420P.rawValue, AV_PIX_FMT_YUVJ420P.rawValue: self = .i420
            case AV_PIX_FMT_NV12.rawValue: self = .nv12
            default: return nil
            }
        }
    }

    var storage: FrameStorage
    /// The frame's pixel format.
    public let pixelFormat: PixelFormat
    /// Presentation time, microseconds on the push's timeline.
    public var timestamp: Int64

    /// Width in pixels.
    public var width: Int { Int(storage.frame.pointee.width) }
    /// Height in pixels.
    public var height: Int { Int(storage.frame.pointee.height) }
    /// The number of planes.
    public var planeCount: Int { pixelFormat.planeCount }

    /// Wraps a decoded frame in I420 or NV12 (nil for any other layout).
    init?(referencing frame: UnsafePointer<AVFrame>, timestamp: Int64) throws(LivePushError) {
        guard let format = PixelFormat(frame.pointee.format) else { return nil }
        storage = try FrameStorage(referencing: frame)
        pixelFormat = format
        self.timestamp = timestamp
    }

    /// A new black picture (for filters that return a frame of their own, and for tests).
    public init(width: Int, height: Int, pixelFormat: PixelFormat = .i420, timestamp: Int64 = 0) throws(LivePushError) {
        guard width > 0, height > 0, width % 2 == 0, height % 2 == 0 else {
            throw LivePushError(.transcodeFailed, "frame size \(width)x\(height) must be positive and even")
        }
        guard let frame = av_frame_alloc() else { throw LivePushError(.outOfMemory, "av_frame_alloc") }
        storage = FrameStorage(adopting: frame)
        frame.pointee.width = Int32(width)
        frame.pointee.height = Int32(height)
        frame.pointee.format = pixelFormat.avFormat.rawValue
        let rc = av_frame_get_buffer(frame, 0)
        guard rc >= 0 else { throw LivePushError(.outOfMemory, "av_frame_get_buffer: \(FF.describe(rc))") }
        self.pixelFormat = pixelFormat
        self.timestamp = timestamp
        for plane in 0..<pixelFormat.planeCount {
            let (base, stride) = storage.plane(plane)
            let rows = planeSize(plane).rows
            base?.update(repeating: plane == 0 ? 16 : 128, count: stride * rows)
        }
    }

    /// Bytes per row that hold pixels (`width` for luma and for NV12's interleaved chroma,
    /// `width / 2` for I420 chroma) and the number of rows of plane `index`.
    public func planeSize(_ index: Int) -> (bytesPerRow: Int, rows: Int) {
        precondition(index >= 0 && index < planeCount, "plane \(index) of a \(pixelFormat) frame")
        if index == 0 { return (width, height) }
        let rows = (height + 1) / 2
        return pixelFormat == .nv12 ? ((width + 1) / 2 * 2, rows) : ((width + 1) / 2, rows)
    }

    /// Distance in bytes between the starts of two rows of plane `index` (>= bytesPerRow).
    public func stride(ofPlane index: Int) -> Int {
        precondition(index >= 0 && index < planeCount, "plane \(index) of a \(pixelFormat) frame")
        return storage.plane(index).stride
    }

    /// Reads plane `index`: `rows × stride` bytes, of which each row's first `bytesPerRow` are pixels.
    public func withPlane<R>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        let (base, stride) = storage.plane(index)
        return try body(UnsafeBufferPointer(start: base, count: stride * planeSize(index).rows))
    }

    /// Writes plane `index` in place. Copies the picture first if it is shared, and the copy
    /// may have another line size: take the stride from the buffer (`buffer.count / rows`),
    /// not from ``stride(ofPlane:)`` read before the call.
    public mutating func withMutablePlane<R>(_ index: Int, _ body: (UnsafeMutableBufferPointer<UInt8>) throws -> R) throws -> R {
        try makeUnique()
        let (base, stride) = storage.plane(index)
        return try body(UnsafeMutableBufferPointer(start: base, count: stride * planeSize(index).rows))
    }

    /// Makes the pixels private to this value.
    mutating func makeUnique() throws(LivePushError) {
        if !isKnownUniquelyReferenced(&storage) {
            storage = try FrameStorage(referencing: storage.frame)
        }
        if !storage.isWritable { try storage.makeWritable() }
    }
}
