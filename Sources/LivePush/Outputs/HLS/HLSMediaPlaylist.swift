/// An HLS media playlist (RFC 8216) as a value: what the output's segments are, rendered as the
/// text a player reads. Pure: the times it shows are given, none is read from a clock.
struct HLSMediaPlaylist: Sendable, Equatable {
    /// One segment as the playlist lists it.
    struct Segment: Sendable, Equatable {
        /// Its URI, relative to the playlist (`index12.ts`).
        var uri: String
        /// Its length, µs (`#EXTINF`, written with 3 decimals).
        var duration: Int64
        /// The wall-clock time of its first picture, µs since 1970 (`#EXT-X-PROGRAM-DATE-TIME`).
        var programDateTime: Int64
        /// Tags that go before it, whole lines without the line break (its cue tags).
        var tags: [String] = []
        /// Its init segment (`#EXT-X-MAP`), for CMAF segments; nil for MPEG-TS.
        var map: String?
        /// `#EXT-X-DISCONTINUITY` goes before it: its codec configuration (CMAF: its init
        /// segment) differs from the segment before.
        var discontinuity = false
    }

    /// `#EXT-X-VERSION`: 3 for `#EXTINF` with decimals; 7 with `#EXT-X-MAP` (CMAF segments,
    /// which RFC 8216 allows from 6; 7 as FFmpeg and Apple's tools write it).
    var version: Int { segments.contains { $0.map != nil } ? 7 : 3 }

    /// `#EXT-X-MEDIA-SEQUENCE`: the sequence number of the first segment listed.
    var mediaSequence = 0
    /// `#EXT-X-DISCONTINUITY-SEQUENCE`: discontinuities that left the window with their segment.
    var discontinuitySequence = 0
    /// The segments listed, oldest first.
    var segments: [Segment] = []
    /// `#EXT-X-TARGETDURATION` at least this (seconds): a live playlist's target must not
    /// shrink as its longest segment leaves the window.
    var minimumTargetDuration = 1
    /// `#EXT-X-ENDLIST`: the stream ended, no segment follows.
    var ended = false

    /// `#EXT-X-TARGETDURATION`: the longest `#EXTINF` as written, rounded to the nearest whole
    /// second, as RFC 8216 (4.3.3.1) bounds it. Rounding up instead made a 1.023 s segment of
    /// `hls_time=1` a target of 2, and players reload a live playlist at its target.
    var targetDuration: Int {
        segments.map { Self.nearestSeconds(Self.milliseconds($0.duration)) }.reduce(minimumTargetDuration, max)
    }

    /// Drops the `count` oldest segments (they left the window) and returns them.
    mutating func removeOldest(_ count: Int) -> [Segment] {
        let leaving = Array(segments.prefix(count))
        segments.removeFirst(leaving.count)
        mediaSequence += leaving.count
        discontinuitySequence += leaving.filter(\.discontinuity).count
        return leaving
    }

    /// The playlist's text.
    var text: String {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:\(version)", "#EXT-X-TARGETDURATION:\(targetDuration)",
                     "#EXT-X-MEDIA-SEQUENCE:\(mediaSequence)"]
        if discontinuitySequence > 0 { lines.append("#EXT-X-DISCONTINUITY-SEQUENCE:\(discontinuitySequence)") }
        // The map applies to every segment after it until the next: said again only where it changes.
        var map: String?
        for segment in segments {
            if segment.discontinuity { lines.append("#EXT-X-DISCONTINUITY") }
            if let uri = segment.map, uri != map {
                lines.append("#EXT-X-MAP:URI=\"\(uri)\"")
                map = uri
            }
            lines.append(contentsOf: segment.tags)
            lines.append("#EXT-X-PROGRAM-DATE-TIME:\(Self.dateTime(segment.programDateTime))")
            lines.append("#EXTINF:\(Self.decimal(segment.duration)),")
            lines.append(segment.uri)
        }
        if ended { lines.append("#EXT-X-ENDLIST") }
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: Formatting

    /// µs rounded to whole milliseconds (half up).
    static func milliseconds(_ micros: Int64) -> Int64 {
        micros >= 0 ? (micros + 500) / 1000 : -((-micros + 500) / 1000)
    }

    private static func nearestSeconds(_ millis: Int64) -> Int {
        Int(max(0, (millis + 500) / 1000))
    }

    /// Seconds with exactly 3 decimals: `2.000`, `0.040` (µs rounded to the millisecond).
    static func decimal(_ micros: Int64) -> String {
        let millis = milliseconds(micros)
        let sign = millis < 0 ? "-" : ""
        let magnitude = abs(millis)
        return "\(sign)\(magnitude / 1000).\(threeDigits(magnitude % 1000))"
    }

    /// ISO 8601 in UTC with milliseconds, as RFC 8216 asks: `2026-11-27T11:30:35.123Z`.
    static func dateTime(_ micros: Int64) -> String {
        let millis = micros >= 0 ? micros / 1000 : -((-micros + 999) / 1000)
        let seconds = millis >= 0 ? millis / 1000 : -((-millis + 999) / 1000)
        let time = UTCTime(unixSeconds: seconds)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let date = time.description.prefix(10)  // `YYYY-MM-DD`
        return "\(date)T\(two(time.hour)):\(two(time.minute)):\(two(time.second)).\(threeDigits(millis - seconds * 1000))Z"
    }

    private static func threeDigits(_ n: Int64) -> String {
        n < 10 ? "00\(n)" : n < 100 ? "0\(n)" : "\(n)"
    }
}
