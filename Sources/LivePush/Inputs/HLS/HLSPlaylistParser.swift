/// Reads an HLS playlist (RFC 8216) from what an origin sent. Pure, and bounded because the
/// origin may be anything: the text, each line, the number of lines and of segments, every
/// number and every string has a limit, and what breaks one is refused with the line's number
/// and the offending text escaped (``TerminalText``), never echoed raw.
///
/// Read: `#EXTM3U`, `#EXT-X-TARGETDURATION`, `#EXT-X-MEDIA-SEQUENCE`,
/// `#EXT-X-DISCONTINUITY-SEQUENCE`, `#EXT-X-PLAYLIST-TYPE`, `#EXT-X-ENDLIST`, `#EXTINF`,
/// `#EXT-X-DISCONTINUITY`, `#EXT-X-STREAM-INF`, and the cue tags (``HLSCueTag``). Refused,
/// because the input could not play them right: encrypted segments (`#EXT-X-KEY` with a method
/// other than NONE), byte ranges, fMP4 segments (`#EXT-X-MAP`). Any other tag or comment is
/// skipped, as RFC 8216 §4.1 asks.
enum HLSPlaylistParser {
    struct Limits: Sendable {
        var maxBytes = 1 << 20
        var maxLineBytes = 8 * 1024
        var maxLines = 100_000
        var maxSegments = 10_000
        var maxVariants = 64
        /// Attributes of one attribute list.
        var maxAttributes = 64
    }

    struct Failure: Error, Equatable, CustomStringConvertible {
        var line: Int
        var reason: String
        var description: String { line > 0 ? "playlist line \(line): \(reason)" : "playlist: \(reason)" }
    }

    /// The largest target duration, segment duration and cue duration taken, seconds.
    static let maxSeconds = 3600.0
    /// The largest sequence number taken (RFC 8216 allows 2^64 − 1; nothing real comes near).
    static let maxSequence = 1_000_000_000_000

    static func parse(_ bytes: some Collection<UInt8>, limits: Limits = Limits()) throws(Failure) -> HLSPlaylist {
        guard bytes.count <= limits.maxBytes else { throw Failure(line: 0, reason: "longer than \(limits.maxBytes / 1024) KiB") }
        var body = Array(bytes)
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body.removeFirst(3) }  // a UTF-8 byte order mark
        var lines: [String] = []
        // Split on the bytes: in a String, CR LF is one Character, not a line feed.
        for raw in body.split(separator: 0x0A, omittingEmptySubsequences: false) {
            guard lines.count < limits.maxLines else { throw Failure(line: lines.count + 1, reason: "more than \(limits.maxLines) lines") }
            let bytes = raw.last == 0x0D ? raw.dropLast() : raw
            guard bytes.count <= limits.maxLineBytes else {
                throw Failure(line: lines.count + 1, reason: "longer than \(limits.maxLineBytes) bytes")
            }
            let line = String(decoding: bytes, as: UTF8.self)
            // Text only: a control character (or a byte that was no UTF-8) has no place in a playlist.
            guard line.unicodeScalars.allSatisfy(isText) else {
                throw Failure(line: lines.count + 1, reason: "control characters or bytes that are not UTF-8: \(shown(line))")
            }
            lines.append(line)
        }
        guard lines.first.map({ $0.trimmingSpaces == "#EXTM3U" }) == true else {
            throw Failure(line: 1, reason: "not an HLS playlist (no #EXTM3U first)")
        }
        var reader = Reader(limits: limits)
        for (index, line) in lines.enumerated().dropFirst() {
            try reader.read(line.trimmingSpaces, number: index + 1)
        }
        return try reader.finish()
    }

    /// A tab or a printable character; not C0, DEL, C1, nor U+FFFD (what a byte that was no
    /// UTF-8 decodes to).
    private static func isText(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09: true
        case 0x00...0x1F, 0x7F...0x9F, 0xFFFD: false
        default: true
        }
    }

    /// The origin's text, fit for an error message.
    static func shown(_ text: some StringProtocol) -> String {
        TerminalText.escape(text, limit: 80)
    }

    /// The state between lines.
    private struct Reader {
        let limits: Limits
        var playlist = HLSPlaylist()
        var sawTargetDuration = false
        var duration: Double?
        var discontinuity = false
        var cues: [HLSCueTag] = []
        var variant: Int?

        init(limits: Limits) { self.limits = limits }

        mutating func read(_ line: String, number: Int) throws(Failure) {
            func fail(_ reason: String) -> Failure { Failure(line: number, reason: reason) }
            if line.isEmpty { return }
            guard line.hasPrefix("#") else {
                try uri(line, number: number)
                return
            }
            let (name, value) = split(line)
            switch name {
            case "#EXT-X-TARGETDURATION":
                playlist.targetDuration = try integer(value, max: Int(HLSPlaylistParser.maxSeconds), number: number)
                sawTargetDuration = true
            case "#EXT-X-MEDIA-SEQUENCE":
                playlist.mediaSequence = try integer(value, max: HLSPlaylistParser.maxSequence, number: number)
            case "#EXT-X-DISCONTINUITY-SEQUENCE":
                playlist.discontinuitySequence = try integer(value, max: HLSPlaylistParser.maxSequence, number: number)
            case "#EXT-X-PLAYLIST-TYPE":
                guard let value, let type = HLSPlaylist.PlaylistType(rawValue: value) else {
                    throw fail("#EXT-X-PLAYLIST-TYPE must be EVENT or VOD, not \(shown(value ?? ""))")
                }
                playlist.playlistType = type
            case "#EXT-X-ENDLIST":
                playlist.ended = true
            case "#EXTINF":
                let seconds = value.map { $0.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false)[0] }
                duration = try decimal(seconds, number: number)
            case "#EXT-X-DISCONTINUITY":
                discontinuity = true
            case "#EXT-X-KEY":
                let attributes = try HLSAttributeList.parse(value ?? "", limit: limits.maxAttributes, line: number)
                if attributes["METHOD"] != "NONE" { throw fail("encrypted segments (#EXT-X-KEY) are not read") }
            case "#EXT-X-BYTERANGE":
                throw fail("byte-range segments (#EXT-X-BYTERANGE) are not read")
            case "#EXT-X-MAP":
                throw fail("fMP4 segments (#EXT-X-MAP) are not read; an MPEG-TS rendition is")
            case "#EXT-X-STREAM-INF":
                let attributes = try HLSAttributeList.parse(value ?? "", limit: limits.maxAttributes, line: number)
                variant = attributes["BANDWIDTH"].flatMap { Int($0) }.map { min(max(0, $0), 1 << 40) } ?? 0
            case "#EXT-OATCLS-SCTE35":
                guard let value, !value.isEmpty else { throw fail("#EXT-OATCLS-SCTE35 without a section") }
                cues.append(.oatcls(base64: value))
            case "#EXT-X-CUE-OUT":
                cues.append(.cueOut(duration: try cueOutDuration(value, number: number)))
            case "#EXT-X-CUE-IN":
                cues.append(.cueIn)
            case "#EXT-X-DATERANGE":
                if let tag = try dateRange(value ?? "", number: number) { cues.append(tag) }
            default:
                break  // Another tag, or a comment.
            }
        }

        private mutating func uri(_ line: String, number: Int) throws(Failure) {
            // A URI is visible ASCII (RFC 3986 §2): anything else would go into a request line.
            guard line.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                throw Failure(line: number, reason: "a URI must be visible ASCII: \(shown(line))")
            }
            if let bandwidth = variant {
                guard playlist.variants.count < limits.maxVariants else {
                    throw Failure(line: number, reason: "more than \(limits.maxVariants) variants")
                }
                playlist.variants.append(.init(uri: line, bandwidth: bandwidth))
                variant = nil
                return
            }
            guard let duration else { throw Failure(line: number, reason: "a URI without #EXTINF before it: \(shown(line))") }
            guard playlist.segments.count < limits.maxSegments else {
                throw Failure(line: number, reason: "more than \(limits.maxSegments) segments")
            }
            playlist.segments.append(HLSSegment(sequence: playlist.mediaSequence + playlist.segments.count, uri: line,
                                                duration: duration, discontinuity: discontinuity, cues: cues))
            self.duration = nil
            discontinuity = false
            cues = []
        }

        func finish() throws(Failure) -> HLSPlaylist {
            if !playlist.variants.isEmpty {
                guard playlist.segments.isEmpty else { throw Failure(line: 0, reason: "both variants and segments") }
                return playlist
            }
            guard sawTargetDuration else { throw Failure(line: 0, reason: "a media playlist without #EXT-X-TARGETDURATION") }
            return playlist
        }

        private func split(_ line: String) -> (String, String?) {
            guard let colon = line.firstIndex(of: ":") else { return (line, nil) }
            return (String(line[..<colon]), String(line[line.index(after: colon)...]))
        }

        private func integer(_ value: String?, max: Int, number: Int) throws(Failure) -> Int {
            guard let value, value.utf8.count <= 20, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                  let parsed = Int(value), parsed <= max else {
                throw Failure(line: number, reason: "expected a whole number up to \(max), got \(shown(value ?? ""))")
            }
            return parsed
        }

        private func decimal(_ value: Substring?, number: Int) throws(Failure) -> Double {
            guard let value, let parsed = HLSAttributeList.decimal(value), parsed <= HLSPlaylistParser.maxSeconds else {
                throw Failure(line: number, reason: "expected seconds from 0 to \(Int(HLSPlaylistParser.maxSeconds)), got \(shown(value ?? ""))")
            }
            return parsed
        }

        /// `#EXT-X-CUE-OUT`'s forms: none, `30`, `30.000`, `DURATION=30` (among other attributes).
        private func cueOutDuration(_ value: String?, number: Int) throws(Failure) -> Double? {
            guard let value, !value.isEmpty else { return nil }
            if let seconds = HLSAttributeList.decimal(value) {
                guard seconds <= HLSPlaylistParser.maxSeconds else { throw Failure(line: number, reason: "#EXT-X-CUE-OUT over an hour") }
                return seconds
            }
            let attributes = try HLSAttributeList.parse(value, limit: limits.maxAttributes, line: number)
            guard let text = attributes["DURATION"] else { return nil }
            return try decimal(Substring(text), number: number)
        }

        /// An `#EXT-X-DATERANGE` with a SCTE-35 attribute (others carry no cue: nil).
        private func dateRange(_ value: String, number: Int) throws(Failure) -> HLSCueTag? {
            let attributes = try HLSAttributeList.parse(value, limit: limits.maxAttributes, line: number)
            let found = [HLSCueTag.DateRangeSCTE35.out, .in, .cmd].compactMap { kind in attributes[kind.rawValue].map { (kind, $0) } }
            guard let (kind, hex) = found.first else { return nil }
            var duration: Double?
            if let text = attributes["PLANNED-DURATION"] ?? attributes["DURATION"] { duration = try decimal(Substring(text), number: number) }
            return .dateRange(id: attributes["ID"] ?? "", attribute: kind, hex: hex, duration: duration)
        }
    }
}
