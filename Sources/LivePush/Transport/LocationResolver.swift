/// Resolves a `Location` field (the WHIP session's resource, or a redirect's target) against
/// the URL of the request it answered, as RFC 3986 §5.2 resolves a reference.
///
/// RFC 9725 lets the endpoint send any reference: servers send absolute URLs
/// (`https://host/whip/resource/1`), absolute paths (`/whip/resource/1`) and relative paths
/// (`resource/1`, against the endpoint's directory) alike.
enum LocationResolver {
    /// A URL longer than this is no resource a WHIP endpoint means (the head is bounded anyway).
    static let maxLength = 8 * 1024

    static func resolve(_ location: String, against base: PushURL) throws(LivePushError) -> PushURL {
        var reference = location.trimmingSpaces
        // A URI is visible ASCII (RFC 3986 §2): anything else (a NUL, a C1 control, raw UTF-8)
        // would go into the request line of the PATCH or DELETE as it is.
        guard reference.utf8.count <= maxLength, reference.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw LivePushError(.whipServerError, "the endpoint's Location is no URI: \(shown(location))")
        }
        // The fragment is the client's own business; it never goes to the server.
        if let hash = reference.firstIndex(of: "#") { reference = String(reference[..<hash]) }
        let absolute: String
        if let colon = reference.firstIndex(of: ":"),
           !reference[..<colon].contains("/"), !reference[..<colon].contains("?") {
            // Has a scheme: absolute. PushURL refuses any scheme WHIP cannot use.
            absolute = reference
        } else if reference.hasPrefix("//") {
            absolute = "\(base.scheme.rawValue):\(reference)"
        } else {
            var (path, query) = split(reference)
            if path.isEmpty {
                // Only a query (or nothing): the base's path, with the new query if there is one.
                path = base.app
                if query == nil, !base.query.isEmpty { query = base.query }
            } else if !path.hasPrefix("/") {
                let directory = base.app.lastIndex(of: "/").map { String(base.app[...$0]) } ?? "/"
                path = directory + path
            }
            absolute = origin(of: base) + removeDotSegments(path) + (query.map { "?\($0)" } ?? "")
        }
        do {
            let url = try PushURL(absolute)
            guard url.isWHIP else { throw LivePushError(.invalidURL) }
            return url
        } catch {
            throw LivePushError(.whipServerError, "the endpoint's Location is no usable http(s) URL: \(shown(location))")
        }
    }

    /// The endpoint's text, fit for an error: secrets masked, controls escaped, cut short.
    private static func shown(_ location: String) -> String {
        TerminalText.escape(Redaction.redactURL(String(location.prefix(maxLength))), limit: 200)
    }

    /// `scheme://host[:port]`, the port only when it is not the scheme's default.
    static func origin(of url: PushURL) -> String {
        "\(url.scheme.rawValue)://\(authority(of: url))"
    }

    /// `host[:port]` as the `Host` field and URLs write it: an IPv6 address in brackets.
    static func authority(of url: PushURL) -> String {
        let host = url.host.contains(":") ? "[\(url.host)]" : url.host
        let defaultPort = url.scheme == .https ? 443 : 80
        return url.port == defaultPort ? host : "\(host):\(url.port)"
    }

    private static func split(_ reference: String) -> (path: String, query: String?) {
        guard let mark = reference.firstIndex(of: "?") else { return (reference, nil) }
        return (String(reference[..<mark]), String(reference[reference.index(after: mark)...]))
    }

    /// RFC 3986 §5.2.4: `.` and `..` segments go, `..` with the segment before it; never above the root.
    static func removeDotSegments(_ path: String) -> String {
        var output: [Substring] = []
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        for (i, segment) in segments.enumerated() {
            let isLast = i == segments.count - 1
            switch segment {
            case ".":
                if isLast { output.append("") }
            case "..":
                if !output.isEmpty { output.removeLast() }
                if isLast { output.append("") }
            default:
                output.append(segment)
            }
        }
        return "/" + output.joined(separator: "/")
    }
}

private extension String {
    var trimmingSpaces: String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return String(drop(while: blank).reversed().drop(while: blank).reversed())
    }
}
