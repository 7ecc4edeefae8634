/// Receives read-only frames beside the filter chain, e.g. for face detection that a beauty
/// filter then uses (the reference's detector delegate).
///
/// Called off the pipeline, on one of the detector workers that every push in the process
/// shares (one per core), one frame at a time: a slow detector never delays the push. While
/// it is busy with one frame, newer ones replace the one waiting (it always gets the latest
/// picture, never a backlog). Frames it receives are its own: later filters do not change them.
/// A detector that blocks holds one of the shared workers, so it should only compute.
public protocol FrameDetector: AnyObject, Sendable {
    /// Looks at one frame; called on a detector worker, never on the pipeline's thread, and
    /// never for two frames at once.
    func detect(_ frame: VideoFrame)
}
