/// What a filter is told before its first frame.
public struct VideoFormat: Sendable, Equatable {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// The frames' pixel format.
    public var pixelFormat: VideoFrame.PixelFormat
    /// Frames per second of the push (0 when unknown).
    public var frameRate: Double

    /// Creates a format.
    public init(width: Int, height: Int, pixelFormat: VideoFrame.PixelFormat, frameRate: Double) {
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.frameRate = frameRate
    }
}

/// An app-supplied step between the decoder and the encoder, the way a beauty SDK plugs
/// into a mobile push SDK (the reference's custom-filter delegate: create, process, destroy).
///
/// All three methods are called on the pipeline's thread, never concurrently. A filter that
/// throws is removed from the chain (``VideoFilter/destroy()`` is still called) and reported
/// as `filterFailed`; the push goes on without it.
public protocol VideoFilter: AnyObject, Sendable {
    /// A short name for events and logs.
    var name: String { get }
    /// Called once before the first frame, and again if the format changes.
    func create(format: VideoFormat) throws
    /// Processes one frame. Modify it in place (``VideoFrame/withMutablePlane(_:_:)``) or
    /// assign a new one, and return true to have the result used; return false to pass the
    /// input on as it was (then leave `frame` untouched).
    func process(_ frame: inout VideoFrame) throws -> Bool
    /// Called once after the last frame: the filter was removed, failed, or the push ended.
    func destroy()
}

extension VideoFilter {
    public var name: String { String(describing: type(of: self)) }
    public func create(format: VideoFormat) throws {}
    public func destroy() {}
}
