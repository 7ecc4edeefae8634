import Synchronization

/// A ``RenditionStage``'s figures: written by the producer, read by stats snapshots.
final class RenditionFigures: Sendable {
    let layout: [(rendition: VideoRendition, outputs: [Int])]
    /// Pictures decoded here, taken from the input with their packets, packets skipped
    /// (``RenditionPictureSource``), and each rendition's frames encoded and bitrate.
    let counts: Mutex<(decoded: Int, fromInput: Int, skipped: Int, encoded: [Int], bitrate: [Int])>

    init(_ branches: [(rendition: VideoRendition, outputs: [Int], bitrate: Int)]) {
        layout = branches.map { ($0.rendition, $0.outputs) }
        counts = Mutex((0, 0, 0, Array(repeating: 0, count: branches.count), branches.map(\.bitrate)))
    }

    /// Pictures decoded, taken from the input and skipped, and each rendition's figures.
    func snapshot() -> (decoded: Int, fromInput: Int, skipped: Int, renditions: [RenditionStats]) {
        let counts = counts.withLock { $0 }
        let renditions = layout.enumerated().map { index, branch in
            RenditionStats(rendition: branch.rendition, outputs: branch.outputs,
                           framesEncoded: counts.encoded[index], bitrate: counts.bitrate[index])
        }
        return (counts.decoded, counts.fromInput, counts.skipped, renditions)
    }
}
