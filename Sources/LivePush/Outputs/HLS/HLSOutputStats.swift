/// An HLS output's own figures (``OutputStats/hls``): its segments, where a splice could not be
/// cut on time, and what its store did.
public struct HLSOutputStats: Sendable, Equatable {
    /// Segments completed and handed to the store.
    public var segments = 0
    /// Splices whose segment started at a later keyframe than the splice, more than a frame late
    /// (a copied source without a keyframe there): the cue tags moved with the cut.
    public var splicesMoved = 0
    /// Segments cut where no keyframe came for a long time (a copied source with very long GOPs).
    public var forcedCuts = 0
    /// Files stored (segments and playlists), and their bytes.
    public var filesWritten = 0
    /// Bytes of the files stored.
    public var bytesWritten: Int64 = 0
    /// Segments removed after they left the playlist's window.
    public var segmentsRemoved = 0
    /// Removals that failed (the file stays; nothing else is held up).
    public var removalsFailed = 0
    /// The most the writer's queue held, bytes (its cap is 16 MiB: see the transports' HLS section).
    public var mostQueuedBytes = 0

    /// Creates empty figures.
    public init() {}
}

extension HLSWriterFigures {
    /// The public figures.
    var stats: HLSOutputStats {
        var stats = HLSOutputStats()
        stats.segments = stream.segments
        stats.splicesMoved = stream.splicesMoved
        stats.forcedCuts = stream.forcedCuts
        stats.filesWritten = puts
        stats.bytesWritten = bytesWritten
        stats.segmentsRemoved = deletes
        stats.removalsFailed = deletesFailed
        stats.mostQueuedBytes = mostQueuedBytes
        return stats
    }
}
