import CFFmpeg

/// Owns one reference to an `AVFrame` (and through it, to its ref-counted buffers).
///
/// ``VideoFrame`` and ``AudioFrame`` are values over this: copying a frame value shares the
/// storage, and the first write through a shared one makes a private copy (copy on write),
/// so a detector or a filter keeping a frame never sees later changes.
///
/// `@unchecked Sendable` only because it wraps a C handle (the `AVFrame`): nothing writes
/// through a shared storage (copy on write), and libav's buffer references count atomically.
final class FrameStorage: @unchecked Sendable {
    let frame: UnsafeMutablePointer<AVFrame>

    /// Takes over `frame` (freed with this storage).
    init(adopting frame: UnsafeMutablePointer<AVFrame>) {
        self.frame = frame
    }

    /// A new reference to `source`'s buffers: no pixel or sample is copied.
    convenience init(referencing source: UnsafePointer<AVFrame>) throws(LivePushError) {
        guard let clone = av_frame_clone(source) else { throw LivePushError(.outOfMemory, "av_frame_clone") }
        self.init(adopting: clone)
    }

    deinit {
        var f: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&f)
    }

    /// Whether every buffer of the frame is referenced only here (the decoder may still hold
    /// a frame it uses as a reference picture: writing into it would corrupt later frames).
    var isWritable: Bool { av_frame_is_writable(frame) != 0 }

    /// Makes the buffers private to this storage, copying them if they are shared.
    func makeWritable() throws(LivePushError) {
        let rc = av_frame_make_writable(frame)
        guard rc >= 0 else { throw LivePushError(.outOfMemory, "av_frame_make_writable: \(FF.describe(rc))") }
    }

    /// Plane `index`'s base pointer and line size.
    func plane(_ index: Int) -> (base: UnsafeMutablePointer<UInt8>?, stride: Int) {
        (FF.mutablePlanes(frame)[index], Int(FF.strides(frame)[index]))
    }
}
