import Synchronization

/// A ``RenditionStage``'s figures: written by the producer, read by stats snapshots.
final class RenditionFigures: Sendable {
    let layout: [(rendition: VideoRendition, outputs: [Int])]
    let counts: Mutex<(decoded: Int, encoded: [Int], bitrate: [Int])>

    init(_ branches: [(rendition: VideoRendition, outputs: [Int], bitrate: Int)]) {
        layout = branches.map { ($0.rendition, $0.outputs) }
        counts = Mutex((0, Array(repeating: 0, count: branches.count), branches.map(\.bitrate)))
    }

    /// Pictures decoded, and each rendition's figures.
    func snapshot() -> (decoded: Int, renditions: [RenditionStats]) {
        let counts = counts.withLock { $0 }
        let renditions = layout.enumerated().map { index, branch in
            RenditionStats(rendition: branch.rendition, outputs: branch.outputs,
                           framesEncoded: counts.encoded[index], bitrate: counts.bitrate[index])
        }
        return (counts.decoded, renditions)
    }
}
