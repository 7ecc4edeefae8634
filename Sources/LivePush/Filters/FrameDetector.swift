/// Receives read-only frames beside the filter chain, e.g. for face detection that a beauty
/// filter then uses (the reference's detector delegate).
///
/// Called on a thread of its own: a slow detector never delays the push. While it is busy
/// with one frame, newer ones replace the one waiting (it always gets the latest picture,
/// never a backlog). Frames it receives are its own: later filters do not change them.
public protocol FrameDetector: AnyObject, Sendable {
    /// Looks at one frame; called on the pipeline's thread.
    func detect(_ frame: VideoFrame)
}
