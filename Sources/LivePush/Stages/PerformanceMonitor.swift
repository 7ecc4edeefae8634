/// Tells when decoding, filtering and encoding cannot keep real time: the reference SDK's
/// low-performance warning (805438211), reported once per episode.
///
/// The pipeline's capacity is measured, not its output rate: frames per second of pipeline
/// busy time. The output rate would also drop when the network applies back-pressure or a
/// push is paused, which is not the encoder's fault.
struct PerformanceMonitor: Sendable {
    let targetFPS: Double
    /// Capacity below this fraction of the target is "too slow" (reference: about 70%).
    let threshold: Double
    /// Consecutive one-second windows below (or back above) the threshold that start (end) an episode.
    let windows: Int

    private var windowFrames = 0
    private var windowBusy: Int64 = 0
    private var slowWindows = 0
    private var fastWindows = 0
    private(set) var inEpisode = false
    /// Capacity over the last complete window, frames per second.
    private(set) var capacityFPS: Double = 0
    /// The most consecutive windows found below the threshold so far: what the warning followed.
    private(set) var longestSlowRun = 0

    init(targetFPS: Double, threshold: Double = 0.7, windows: Int = 3) {
        self.targetFPS = max(1, targetFPS)
        self.threshold = threshold
        self.windows = max(1, windows)
    }

    /// Records `frames` output frames that took `busy` microseconds of pipeline time.
    /// True when this starts a new low-performance episode.
    mutating func record(frames: Int, busy: Int64) -> Bool {
        windowFrames += frames
        windowBusy += max(0, busy)
        // A window is one second of media, so a slow pipeline is judged as fast as a quick one.
        guard Double(windowFrames) >= targetFPS.rounded() else { return false }
        capacityFPS = Double(windowFrames) * 1_000_000 / Double(max(1, windowBusy))
        windowFrames = 0
        windowBusy = 0
        if capacityFPS < threshold * targetFPS {
            slowWindows += 1
            fastWindows = 0
            longestSlowRun = max(longestSlowRun, slowWindows)
        } else {
            fastWindows += 1
            slowWindows = 0
        }
        if !inEpisode && slowWindows >= windows {
            inEpisode = true
            return true
        }
        if inEpisode && fastWindows >= windows { inEpisode = false }
        return false
    }
}
