/// A validated push URL: `rtmp://` or `rtmps://` (with an app and a stream name), `srt://`
/// (a host and a port, with FFmpeg's srt URL options in the query, see ``SRTURLOptions``),
/// `http(s)://` (a WHIP endpoint), or an HLS output: a URL whose path ends in `.m3u8`,
/// `file:///dir/name.m3u8` or `https://origin/dir/name.m3u8` (uploaded with PUT), FFmpeg's hls
/// options in the query: `hls_time`, `hls_list_size`, `hls_segment_type`.
///
/// librtmp's own parser is lenient (it accepts a host with a space, a missing stream name)
/// and then fails late with a vague error; validating here gives the user the
/// `invalidURL` code and a sentence before anything touches the network.
public struct PushURL: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    /// `http` and `https` are WHIP endpoints (WebRTC outputs, RFC 9725), unless the path ends
    /// in `.m3u8` (an HLS output); `file` is an HLS output's directory.
    public enum Scheme: String, Sendable {
        /// RTMP.
        case rtmp
        /// RTMP over TLS.
        case rtmps
        /// SRT.
        case srt
        /// WHIP over HTTP.
        case http
        /// WHIP over HTTPS.
        case https
        /// An HLS output written to a local directory.
        case file

        /// Whether the scheme can name a WHIP endpoint (`http`, `https`; an HLS playlist URL
        /// of these schemes is not one: see ``PushURL/isWHIP``).
        public var isWHIP: Bool { self == .http || self == .https }
    }

    /// The URL's scheme.
    public let scheme: Scheme
    /// The server's host.
    public let host: String
    /// The server's port; when the URL names none: 1935 (rtmp), 443 (rtmps, https), 80 (http).
    /// An srt:// URL must name one; a file:// URL has none (0).
    public let port: Int
    /// The application path, e.g. `live` or `live/instance` (empty for `srt://`; a WHIP
    /// endpoint's whole path, `/whip/endpoint`, for `http(s)://`; an HLS output's directory,
    /// `/srv/hls/ch1`, for `file://`).
    public let app: String
    /// The stream name (the publish name), without the query (empty for `srt://` and WHIP; an
    /// HLS output's playlist name, `index.m3u8`).
    public let streamName: String
    /// The query string without the leading `?` (e.g. `auth_key=...`), empty when absent.
    public let query: String
    /// The URL as given.
    public let rawValue: String

    /// Parses and checks a push URL; throws `invalidURL`.
    public init(_ string: String) throws(LivePushError) {
        func invalid(_ why: String) -> LivePushError {
            // Without a scheme it may be a stream key pasted alone: all of it is masked then.
            LivePushError(.invalidURL, "\(why): \(string.contains("://") ? Redaction.redactStreamKey(string) : Redaction.mask(string))")
        }
        guard let schemeEnd = string.firstRange(of: "://") else { throw invalid("missing scheme") }
        guard let scheme = Scheme(rawValue: String(string[..<schemeEnd.lowerBound]).lowercased()) else {
            throw invalid("scheme must be rtmp, rtmps, srt, http(s) for a WHIP endpoint, or file (an HLS playlist, .m3u8)")
        }
        let rest = string[schemeEnd.upperBound...]
        guard !rest.contains(where: { $0.isWhitespace }) else {
            throw invalid("whitespace in URL")
        }
        let pathAndQuery = rest.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let query = pathAndQuery.count > 1 ? String(pathAndQuery[1]) : ""
        let components = pathAndQuery[0].split(separator: "/", omittingEmptySubsequences: false)
        let authority = String(components[0])
        if scheme == .file {
            // `file:///dir/name.m3u8`: a local path, with no host but this one.
            guard authority.isEmpty || authority.lowercased() == "localhost" else {
                throw invalid("a file:// URL names no host: file:///dir/name.m3u8")
            }
            let (directory, name) = try Self.hlsFile(components.dropFirst().map(String.init), query: query, invalid: invalid)
            self.scheme = .file
            self.host = ""
            self.port = 0
            app = directory
            streamName = name
            self.query = query
            rawValue = string
            return
        }
        // An SRT listener binds every address: `srt://:9000?mode=listener`.
        guard !authority.isEmpty || scheme == .srt else { throw invalid("missing host") }

        var host = authority
        var port = switch scheme {
        case .rtmp: 1935
        case .rtmps: 443
        case .srt, .file: 0
        case .http: 80
        case .https: 443
        }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw invalid("unterminated IPv6 host") }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") {
                guard let p = Int(after.dropFirst()), (1...65535).contains(p) else { throw invalid("bad port") }
                port = p
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            guard let p = Int(authority[authority.index(after: colon)...]), (1...65535).contains(p) else {
                throw invalid("bad port")
            }
            port = p
        }
        let hostAllowed = host.allSatisfy { (c: Character) -> Bool in
            c.isLetter || c.isNumber || ".-_:".contains(c)
        }
        guard !host.isEmpty || scheme == .srt, hostAllowed else { throw invalid("bad host") }

        let path = components.dropFirst().filter { !$0.isEmpty }.map(String.init)
        if scheme == .http || scheme == .https, Self.namesPlaylist(path.last) {
            // An HLS output uploaded to an origin: its directory and playlist name, as for file://.
            _ = try HLSOptions(query: query, keepsOthers: true)
            self.scheme = scheme
            self.host = host
            self.port = port
            app = "/" + path.dropLast().joined(separator: "/")
            streamName = path[path.count - 1]
            self.query = query
            rawValue = string
            return
        }
        if scheme == .http || scheme == .https {
            // A WHIP endpoint: its path is the resource the offer is posted to.
            self.scheme = scheme
            self.host = host
            self.port = port
            app = "/" + components.dropFirst().joined(separator: "/")
            streamName = ""
            self.query = query
            rawValue = string
            return
        }
        if scheme == .srt {
            guard port != 0 else { throw invalid("an srt:// URL needs a port") }
            guard path.isEmpty else { throw invalid("an srt:// URL has no path; name the stream with ?streamid=") }
            let options = try SRTURLOptions(query: query)
            guard !host.isEmpty || options.mode == .listener else { throw invalid("missing host (only a listener may omit it)") }
            self.scheme = scheme
            self.host = host
            self.port = port
            app = ""
            streamName = ""
            self.query = query
            rawValue = string
            return
        }
        guard path.count >= 2 else {
            throw invalid(path.isEmpty ? "missing app and stream name" : "missing stream name")
        }
        self.scheme = scheme
        self.host = host
        self.port = port
        self.app = path.dropLast().joined(separator: "/")
        self.streamName = path[path.count - 1]
        self.query = query
        self.rawValue = string
    }

    /// Whether this is a WHIP endpoint (`http://` or `https://`, not an HLS playlist).
    public var isWHIP: Bool { scheme.isWHIP && !isHLS }

    /// Whether this is an HLS output: a `file://` URL, or a path that ends in `.m3u8`.
    public var isHLS: Bool { scheme == .file || Self.namesPlaylist(streamName) }

    /// The options of an HLS output's URL (nil for the others); validated when the URL was.
    var hlsOptions: HLSOptions? {
        isHLS ? try? HLSOptions(query: query, keepsOthers: scheme != .file) : nil
    }

    /// Whether a path's last segment names an HLS playlist (`name.m3u8`, any case).
    static func namesPlaylist(_ name: (some StringProtocol)?) -> Bool {
        guard let name else { return false }
        return name.count > 5 && name.lowercased().hasSuffix(".m3u8")
    }

    /// A `file://` HLS output's directory and playlist name, from the path's `segments` (after
    /// `file://` and its empty host); its query's options are checked.
    private static func hlsFile(_ segments: [String], query: String,
                                invalid: (String) -> LivePushError) throws(LivePushError) -> (directory: String, name: String) {
        guard let name = segments.last, namesPlaylist(name) else {
            throw invalid("a file:// output is an HLS playlist: its path ends in .m3u8 (file:///dir/name.m3u8)")
        }
        let directory = segments.dropLast()
        guard !directory.contains(where: { $0 == ".." }) else { throw invalid("no .. in a file:// output's path") }
        _ = try HLSOptions(query: query, keepsOthers: false)
        return ("/" + directory.filter { !$0.isEmpty }.joined(separator: "/"), name)
    }

    /// The SRT options of an `srt://` URL (nil for RTMP); validated when the URL was.
    public var srtOptions: SRTURLOptions? {
        scheme == .srt ? try? SRTURLOptions(query: query) : nil
    }

    /// The URL, when it is an RTMP one (what auth_key signing covers); else `invalidURL`.
    public static func rtmp(_ string: String) throws(LivePushError) -> PushURL {
        let url = try PushURL(string)
        guard url.scheme == .rtmp || url.scheme == .rtmps else {
            throw LivePushError(.invalidURL, "an rtmp:// or rtmps:// URL is needed here: \(url.redacted)")
        }
        return url
    }

    /// The path that URL signing covers: `/app/stream`.
    public var signedPath: String { "/\(app)/\(streamName)" }

    /// The URL with its secrets (auth_key, token, ...) masked; safe for logs.
    /// The URL as events, errors and logs show it: secrets in the query and the authority
    /// masked, and the stream name (often a stream key) cut to its first 4 characters.
    /// A `file://` HLS output's path is the user's own directory, not a key: it is shown whole.
    public var redacted: String {
        guard scheme == .file else { return Redaction.redactStreamKey(rawValue) }
        let path = "file://\(app == "/" ? "" : app)/\(streamName)"
        return query.isEmpty ? path : path + "?" + Redaction.redactParameters(query[...])
    }

    public var description: String { redacted }

    /// `dump` and debuggers show the redacted URL, never the raw one.
    public var customMirror: Mirror {
        Mirror(self, children: ["url": redacted, "host": host, "port": port, "app": app, "streamName": Redaction.mask(streamName)])
    }
}
