/// An HLS input's primary: its fetcher (playlist and segments, on a thread of its own) and the
/// queue from which the live input's reader (``LiveFeed``) opens a demuxer at a time.
///
/// An `http(s)://…m3u8` input is read this way rather than by libavformat's HLS demuxer, so
/// that LivePush sees the playlist's tags (cues), bounds every wait itself (libavformat's HLS
/// reader, reopened after an origin restart, hung with no further retry) and paces the
/// segments (a segment arrives whole; the live jitter buffer lost 40 % of each).
///
/// **The buffer is one target duration**: the reader hands the first picture over that late,
/// so the next segment has that long to arrive; the queue holds 3 segments at most, encoded
/// (``HLSSegmentQueue``), beyond which the fetcher waits and a live window that slides
/// meanwhile is a gap.
final class HLSFeedSource: Sendable {
    let name: String
    let queue: HLSSegmentQueue
    private let fetcher: HLSFetcher
    private let timeout: Duration

    /// Whether `url` is read as an HLS input: http(s), a path ending in `.m3u8`, and an input
    /// allowed to open what it names (``LiveInputOptions/followsReferences``).
    static func handles(_ url: String, followsReferences: Bool) -> Bool {
        guard followsReferences else { return false }
        let lower = url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else { return false }
        let path = lower.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
            .split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
        return path.hasSuffix(".m3u8")
    }

    /// Starts fetching `url`. `tags`: the cue tags read (``CueSubscription/hlsTags``).
    init(url: String, options: LiveInputOptions, tls: TLSOptions, tags: Set<HLSTagFamily>,
         clock: any MonotonicClock) throws(LivePushError) {
        let parsed = try HLSURL(url)
        name = parsed.description
        timeout = options.timeout
        queue = HLSSegmentQueue()
        fetcher = HLSFetcher(url: parsed, name: name, client: HLSHTTPClient(tls: tls), queue: queue, clock: clock,
                             timeout: options.timeout, families: tags)
        fetcher.start()
    }

    deinit { queue.stop() }

    /// The buffer: how late the first picture is handed over (µs).
    var startDelay: Int64 { queue.targetMicros }

    /// A demuxer over the segments from where the queue stands; it waits for the first one
    /// (the input timeout or two target durations at most). Throws what kept it from coming
    /// when none did.
    func openDemuxer() throws(LivePushError) -> FFDemuxer {
        let source = HLSByteSource(queue: queue, name: name, minimumWait: timeout)
        do throws(LivePushError) {
            return try FFDemuxer(source: source, name: name)
        } catch {
            throw source.failure ?? error
        }
    }

    /// Ends the fetcher (within its request's deadline) and every wait on the queue.
    func stop() {
        queue.stop()
    }
}
