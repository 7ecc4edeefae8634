/// An HLS playlist as an HLS input reads it (RFC 8216): a media playlist's segments with the
/// cue tags placed before each, or a master playlist's variants. A value, parsed by
/// ``HLSPlaylistParser`` from what the origin sent, with every string and number bounded.
struct HLSPlaylist: Sendable, Equatable {
    /// `#EXT-X-PLAYLIST-TYPE`.
    enum PlaylistType: String, Sendable, Equatable {
        case event = "EVENT"
        case vod = "VOD"
    }

    /// A master playlist's `#EXT-X-STREAM-INF` and the URI after it.
    struct Variant: Sendable, Equatable {
        var uri: String
        /// bit/s (`BANDWIDTH`), 0 when absent.
        var bandwidth: Int
    }

    /// `#EXT-X-TARGETDURATION`, seconds (a media playlist's; 0 for a master playlist).
    var targetDuration: Int = 0
    /// `#EXT-X-MEDIA-SEQUENCE`: the first segment's sequence number.
    var mediaSequence: Int = 0
    /// `#EXT-X-DISCONTINUITY-SEQUENCE`.
    var discontinuitySequence: Int = 0
    /// `#EXT-X-ENDLIST`: no segment will be added.
    var ended = false
    var playlistType: PlaylistType?
    var segments: [HLSSegment] = []
    /// A master playlist's variants (then there are no segments).
    var variants: [Variant] = []

    var isMaster: Bool { !variants.isEmpty }

    /// The sequence number after the last segment.
    var nextSequence: Int { mediaSequence + segments.count }

    /// The target duration in µs, at least one second (what the reload timing and the input's
    /// buffer are measured in).
    var targetMicros: Int64 { Int64(max(1, targetDuration)) * 1_000_000 }
}

/// One media segment: its URI (as written, resolved against the playlist's URL by the
/// fetcher), its duration, and what the playlist said before it.
struct HLSSegment: Sendable, Equatable {
    /// Its media sequence number.
    var sequence: Int
    var uri: String
    /// `#EXTINF`, seconds.
    var duration: Double
    /// `#EXT-X-DISCONTINUITY` before it: its timestamps (and maybe its codecs) start afresh.
    var discontinuity = false
    /// The cue tags between the previous segment and this one, in order.
    var cues: [HLSCueTag] = []
}
