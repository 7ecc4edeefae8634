/// Follows a media playlist across reloads: which segments are new, when to reload, and what
/// happened in between (a gap, an origin that restarted). Pure: the fetcher feeds it each
/// playlist with the time its load began, and carries out what it answers.
///
/// - **Where to start** (``startIndex(in:)``): a VOD playlist (`#EXT-X-ENDLIST` or type VOD) at
///   its first segment, played in real time; a live one (a sliding window or an EVENT still
///   growing) at its second-to-last segment, so that one segment is in hand while the next is
///   on its way (RFC 8216 §6.3.3 asks for no less than three target durations from the end;
///   the input's own buffer, one target duration, makes the difference up).
/// - **Reloads** (RFC 8216 §6.3.4): one target duration after the last load *began* when the
///   playlist changed, half of it when it had not; none once it has ended.
/// - **A gap**: the window slid past the next segment (the input fell behind): it goes on at
///   the live start, and the first segment taken is a boundary.
/// - **A restart**: the sequence went backwards (the next playlist ends before the segment
///   taken last), or the segment taken last has another URI under its number: the origin
///   started afresh (media sequence from 0). It starts again as on a first load, at a boundary.
struct HLSPlaylistTracker: Sendable, Equatable {
    /// What one load says.
    struct Update: Sendable, Equatable {
        /// The segments to take, in order.
        var segments: [HLSSegment] = []
        /// Whether the playlist differs from the one before.
        var changed = false
        /// Segments were missed: the first of `segments` starts afresh.
        var gap = false
        /// The origin restarted: the first of `segments` starts afresh.
        var restarted = false
        /// When to load it again (µs, on the clock `update` was given); nil once it has ended.
        var reloadAt: Int64?
    }

    /// The next segment's sequence number; nil before the first load.
    private(set) var next: Int?
    /// The segment taken last: its sequence number and URI.
    private var last: (sequence: Int, uri: String)?
    /// What told a changed playlist from the same one: its first sequence number, its segment
    /// count and its last URI.
    private var shape: (sequence: Int, count: Int, lastURI: String?, ended: Bool)?

    static func == (a: Self, b: Self) -> Bool {
        a.next == b.next && a.last?.sequence == b.last?.sequence && a.last?.uri == b.last?.uri
            && a.shape?.sequence == b.shape?.sequence && a.shape?.count == b.shape?.count
            && a.shape?.lastURI == b.shape?.lastURI && a.shape?.ended == b.shape?.ended
    }

    init() {}

    /// Where a first load (or a restart) starts.
    static func startIndex(in playlist: HLSPlaylist) -> Int {
        if playlist.ended || playlist.playlistType == .vod { return 0 }
        return max(0, playlist.segments.count - 2)
    }

    /// Takes a playlist loaded at `loadBegan` (µs).
    mutating func update(_ playlist: HLSPlaylist, loadBegan: Int64) -> Update {
        var update = Update()
        let newShape = (sequence: playlist.mediaSequence, count: playlist.segments.count,
                        lastURI: playlist.segments.last?.uri, ended: playlist.ended)
        update.changed = shape.map { $0 != newShape } ?? true
        shape = newShape
        let start: Int
        if let next {
            if restarted(playlist) {
                update.restarted = true
                // The old numbering means nothing any more.
                last = nil
                start = playlist.mediaSequence + Self.startIndex(in: playlist)
            } else if next < playlist.mediaSequence {
                update.gap = true
                start = playlist.mediaSequence + Self.startIndex(in: playlist)
            } else {
                start = next
            }
        } else {
            start = playlist.mediaSequence + Self.startIndex(in: playlist)
        }
        update.segments = playlist.segments.filter { $0.sequence >= start }
        if let taken = update.segments.last {
            last = (taken.sequence, taken.uri)
            next = taken.sequence + 1
        } else {
            next = max(start, playlist.nextSequence)
        }
        if !update.segments.isEmpty, update.gap || update.restarted { update.segments[0].discontinuity = true }
        if !playlist.ended {
            let target = playlist.targetMicros
            update.reloadAt = loadBegan + (update.changed ? target : target / 2)
        }
        return update
    }

    private func restarted(_ playlist: HLSPlaylist) -> Bool {
        // Ends before the last segment taken: the numbers went back.
        if let last, playlist.nextSequence <= last.sequence { return true }
        // The number of the last segment taken now names another one.
        if let last, let same = playlist.segments.first(where: { $0.sequence == last.sequence }), same.uri != last.uri { return true }
        return false
    }
}
