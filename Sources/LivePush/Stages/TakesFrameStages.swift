/// An input whose raw pictures come from the app (``FrameInput``): the push hands it its
/// ``FrameStages`` at start, so that the app's frames go through the detector and the filters
/// like a file's decoded pictures do. Called once, before the producer runs.
protocol TakesFrameStages: AnyObject {
    func attach(_ stages: FrameStages)
}
