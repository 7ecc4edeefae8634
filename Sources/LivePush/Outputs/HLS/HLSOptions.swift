/// The options of an HLS output URL (`file:///dir/name.m3u8?…`, `https://host/path/name.m3u8?…`),
/// named as FFmpeg's hls muxer names them, so that what works with `ffmpeg -f hls -hls_time 2`
/// reads the same here: `?hls_time=2&hls_list_size=6&hls_segment_type=mpegts`.
///
/// A misspelt option of a `file://` URL is refused (`invalidURL`) rather than ignored. An
/// `http(s)://` origin may need query parameters of its own (a signature): there, the
/// parameters that are not `hls_` options are kept and sent with every upload
/// (``originQuery``); an unknown `hls_` option is still refused.
struct HLSOptions: Sendable, Equatable {
    /// `hls_segment_type`: what the segments are.
    enum SegmentType: String, Sendable {
        /// MPEG-TS, LivePush's own muxer (the default).
        case mpegts
        /// CMAF (fragmented MP4): an init segment (`#EXT-X-MAP`), then `.m4s` segments.
        case fmp4
    }

    /// `hls_time`: the target segment length, µs (a segment ends at the first keyframe after it).
    var targetDuration: Int64 = 2_000_000
    /// `hls_list_size`: segments the playlist lists (0: every segment, and the files stay).
    var listSize = 6
    /// `hls_segment_type`.
    var segmentType: SegmentType = .mpegts
    /// An http(s) origin's own query parameters, sent with every upload ("" for none).
    var originQuery = ""

    /// The range `hls_time` may take, seconds.
    static let targetDurationRange = 0.1...60.0
    /// The most segments a playlist may list.
    static let maxListSize = 100_000

    init() {}

    /// Parses the query of an HLS URL; `keepsOthers`: an http(s) origin's own parameters are
    /// kept (``originQuery``) rather than refused.
    init(query: String, keepsOthers: Bool) throws(LivePushError) {
        var others: [Substring] = []
        for pair in query.split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).lowercased()
            let value = parts.count > 1 ? SRTURLOptions.percentDecoded(parts[1]) : ""
            func invalid(_ why: String) -> LivePushError {
                LivePushError(.invalidURL, "HLS option \(name)=\(TerminalText.escape(value, limit: 20)): \(why)")
            }
            switch name {
            case "hls_time":
                guard let seconds = Double(value), seconds.isFinite, Self.targetDurationRange.contains(seconds) else {
                    throw invalid("seconds from 0.1 to 60 (the target segment length)")
                }
                targetDuration = Int64((seconds * 1_000_000).rounded())
            case "hls_list_size":
                guard let count = Int(value), (0...Self.maxListSize).contains(count) else {
                    throw invalid("a whole number of segments from 0 (keep them all) to \(Self.maxListSize)")
                }
                listSize = count
            case "hls_segment_type":
                guard let type = SegmentType(rawValue: value.lowercased()) else { throw invalid("mpegts or fmp4") }
                segmentType = type
            default:
                guard keepsOthers, !name.hasPrefix("hls_") else {
                    throw LivePushError(.invalidURL, "unknown HLS option \(TerminalText.escape(name, limit: 40)) "
                                        + "(hls_time, hls_list_size, hls_segment_type)")
                }
                others.append(pair)
            }
        }
        originQuery = others.joined(separator: "&")
    }
}
