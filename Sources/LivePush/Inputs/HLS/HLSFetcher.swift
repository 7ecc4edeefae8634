import DequeModule

/// An HLS input's fetcher: a thread of its own (`livepush.hlsin`) that loads the playlist at the
/// times RFC 8216 gives (``HLSPlaylistTracker``), fetches each new segment once, turns the tags
/// before it into SCTE-35 sections (``HLSCueMapper``) and hands both to the reader through the
/// bounded ``HLSSegmentQueue``. It blocks only in its own HTTP requests, each within its
/// deadline, and in waits a stop ends at once.
///
/// - A playlist that does not load (refused, 404, a timeout, not a playlist) is loaded again
///   from 0.5 s, doubling up to one target duration; what went wrong is kept for the reader,
///   whose wait for the next segment then fails with it (`inputRetry`).
/// - A segment that does not load is skipped; the next one starts afresh (a boundary), and the
///   cues of the skipped one go with it.
/// - A master playlist: its variant with the highest `BANDWIDTH` is followed.
final class HLSFetcher: Sendable {
    /// A playlist's bound: 1 MiB (thousands of segments).
    static let maxPlaylistBytes = 1 << 20
    /// A segment's bound.
    static let maxSegmentBytes = 64 << 20
    /// Segments found and not yet fetched, at most: beyond, the oldest are dropped (a gap).
    static let maxPending = 8

    private let url: HLSURL
    private let name: String
    private let client: HLSHTTPClient
    private let queue: HLSSegmentQueue
    private let clock: any MonotonicClock
    private let timeout: Duration
    private let families: Set<HLSTagFamily>

    init(url: HLSURL, name: String, client: HLSHTTPClient, queue: HLSSegmentQueue, clock: any MonotonicClock,
         timeout: Duration, families: Set<HLSTagFamily>) {
        self.url = url
        self.name = name
        self.client = client
        self.queue = queue
        self.clock = clock
        self.timeout = timeout
        self.families = families
    }

    func start() {
        WorkerThread.start(name: "livepush.hlsin") { self.run() }
    }

    /// What the loop carries from one turn to the next.
    private struct Progress {
        var mediaURL: HLSURL
        var tracker = HLSPlaylistTracker()
        var mapper: HLSCueMapper
        var pending = Deque<HLSSegment>()
        /// Fetched, waiting for room in the queue.
        var ready: HLSFetchedSegment?
        /// The next segment fetched starts afresh (the first, or after one skipped).
        var boundary = true
        /// Cues of skipped segments, for the next one.
        var carriedCues: [[UInt8]] = []
        var failures = 0
        var nextLoad: Int64
        var ended = false
    }

    private func run() {
        var progress = Progress(mediaURL: url, mapper: HLSCueMapper(families: families), nextLoad: clock.now().microseconds)
        while !queue.isStopped {
            handOver(&progress)
            if progress.ended && progress.pending.isEmpty && progress.ready == nil {
                // What the reader says once it has played the last segment.
                queue.problem = LivePushError(.mediaReadFailed, "\(name): the playlist ended (#EXT-X-ENDLIST)")
                return
            }
            if progress.ended {
                continue
            }
            guard queue.sleep(until: progress.nextLoad, clock: clock) else { return }
            load(&progress)
        }
    }

    /// Fetches what is pending and hands it to the queue until the next load is due (or a
    /// segment waits for room past it).
    private func handOver(_ progress: inout Progress) {
        while !queue.isStopped {
            if let segment = progress.ready {
                // An ended playlist is not reloaded: its segments wait for room as long as it takes.
                let until = progress.ended ? clock.now().microseconds + 1_000_000 : progress.nextLoad
                guard queue.push(segment, waitingUntil: until, clock: clock) else {
                    if progress.ended { continue }
                    return
                }
                progress.ready = nil
                continue
            }
            guard let segment = progress.pending.popFirst() else { return }
            let fetched = fetch(segment, &progress)
            progress.ready = fetched
        }
    }

    private func fetch(_ segment: HLSSegment, _ progress: inout Progress) -> HLSFetchedSegment? {
        let cues = progress.carriedCues + progress.mapper.sections(for: segment.cues)
        let target = queue.targetMicros
        do throws(LivePushError) {
            let segmentURL = try resolve(segment.uri, against: progress.mediaURL)
            let deadline = max(timeout, .microseconds(target))
            let (bytes, _) = try client.get(segmentURL, timeout: deadline, maxBytes: Self.maxSegmentBytes)
            let fetched = HLSFetchedSegment(sequence: segment.sequence, bytes: bytes,
                                            duration: Int64(segment.duration * 1_000_000),
                                            boundary: progress.boundary || segment.discontinuity, cues: cues)
            progress.boundary = false
            progress.carriedCues = []
            return fetched
        } catch {
            queue.problem = LivePushError(error.code, "segment \(segment.sequence): \(error.detail ?? error.message)")
            progress.boundary = true
            progress.carriedCues = cues
            return nil
        }
    }

    private func load(_ progress: inout Progress) {
        let began = clock.now().microseconds
        do throws(LivePushError) {
            var playlist = try loadPlaylist(progress.mediaURL)
            if playlist.isMaster {
                // Its best variant, once: a variant that is itself a master playlist is refused.
                let best = playlist.variants.max { $0.bandwidth < $1.bandwidth }!
                progress.mediaURL = try resolve(best.uri, against: progress.mediaURL)
                playlist = try loadPlaylist(progress.mediaURL)
                guard !playlist.isMaster else { throw HLSHTTPClient.failure(progress.mediaURL, "a variant that is a master playlist") }
            }
            queue.targetMicros = playlist.targetMicros
            let update = progress.tracker.update(playlist, loadBegan: began)
            if update.restarted || update.gap { progress.pending.removeAll() }
            progress.pending.append(contentsOf: update.segments)
            while progress.pending.count > Self.maxPending {
                progress.pending.removeFirst()
                if !progress.pending.isEmpty { progress.pending[0].discontinuity = true }
            }
            progress.failures = 0
            if let reloadAt = update.reloadAt {
                progress.nextLoad = reloadAt
            } else {
                progress.ended = true
            }
        } catch {
            queue.problem = error
            progress.failures += 1
            var delay: Int64 = 500_000
            for _ in 1..<min(progress.failures, 16) { delay *= 2 }
            progress.nextLoad = began + min(delay, max(500_000, queue.targetMicros))
        }
    }

    private func loadPlaylist(_ url: HLSURL) throws(LivePushError) -> HLSPlaylist {
        let (body, _) = try client.get(url, timeout: timeout, maxBytes: Self.maxPlaylistBytes)
        do throws(HLSPlaylistParser.Failure) {
            return try HLSPlaylistParser.parse(body)
        } catch {
            throw HLSHTTPClient.failure(url, error.description)
        }
    }

    /// A playlist's URI against the playlist's URL (RFC 3986 §5.2).
    private func resolve(_ uri: String, against base: HLSURL) throws(LivePushError) -> HLSURL {
        let resolved: HLSURL
        do throws(LivePushError) {
            resolved = try base.resolve(uri)
        } catch {
            throw HLSHTTPClient.failure(base, "not a usable http(s) URI: \(HLSPlaylistParser.shown(uri))")
        }
        // What came over https:// never sends its requests over http://.
        guard !(base.secure && !resolved.secure) else { throw HLSHTTPClient.failure(base, "refused a URI from https:// to http://") }
        return resolved
    }
}
