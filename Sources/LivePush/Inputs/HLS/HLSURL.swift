/// An absolute `http(s)://` URL an HLS input reads: its playlist's, a variant's, a segment's.
///
/// Its own small value rather than ``PushURL``, which is about where a push goes (an
/// `http(s)://…m3u8` there is an HLS *output*). Bounded and checked like everything a playlist
/// names: 8 KiB, visible ASCII only (it goes into a request line as it is), a host of letters,
/// digits, `.-_` or an IPv6 address in brackets; the fragment is dropped.
struct HLSURL: Sendable, Equatable, CustomStringConvertible {
    static let maxLength = 8 * 1024

    let secure: Bool
    let host: String
    let port: Int
    /// The path, from its `/`.
    let path: String
    /// Without its `?`; empty when none.
    let query: String

    init(_ text: String) throws(LivePushError) {
        func invalid(_ why: String) -> LivePushError {
            LivePushError(.invalidURL, "\(why): \(Redaction.redactStreamKey(TerminalText.escape(text, limit: 200)))")
        }
        guard text.utf8.count <= Self.maxLength, text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw invalid("an HLS URL is at most 8 KiB of visible ASCII")
        }
        var rest = Substring(text)
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let lower = rest.lowercased()
        if lower.hasPrefix("https://") {
            secure = true
            rest = rest.dropFirst(8)
        } else if lower.hasPrefix("http://") {
            secure = false
            rest = rest.dropFirst(7)
        } else {
            throw invalid("not an http(s) URL")
        }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var after = rest[authorityEnd...]
        var query = ""
        if let mark = after.firstIndex(of: "?") {
            query = String(after[after.index(after: mark)...])
            after = after[..<mark]
        }
        path = after.isEmpty ? "/" : String(after)
        self.query = query
        var host = String(authority)
        var port = secure ? 443 : 80
        if let at = host.lastIndex(of: "@") { host = String(host[host.index(after: at)...]) }  // user info is not sent
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { throw invalid("an unterminated IPv6 host") }
            let tail = host[host.index(after: close)...]
            if !tail.isEmpty {
                guard tail.hasPrefix(":"), let p = Int(tail.dropFirst()), (1...65535).contains(p) else { throw invalid("a bad port") }
                port = p
            }
            host = String(host[host.index(after: host.startIndex)..<close])
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { throw invalid("a bad IPv6 host") }
        } else {
            if let colon = host.lastIndex(of: ":") {
                guard let p = Int(host[host.index(after: colon)...]), (1...65535).contains(p) else { throw invalid("a bad port") }
                port = p
                host = String(host[..<colon])
            }
            guard !host.isEmpty, host.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0)
                                                       || (0x61...0x7A).contains($0) || $0 == 0x2E || $0 == 0x2D || $0 == 0x5F }) else {
                throw invalid("a bad host")
            }
        }
        self.host = host
        self.port = port
    }

    /// `host[:port]`, the port only when it is not the scheme's default; an IPv6 address in brackets.
    var authority: String {
        let shown = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? shown : "\(shown):\(port)"
    }

    /// What the request line asks for.
    var target: String { query.isEmpty ? path : "\(path)?\(query)" }

    var rawValue: String { "\(secure ? "https" : "http")://\(authority)\(target)" }

    /// As messages show it: secrets in the query masked, the last path segment cut.
    var description: String { Redaction.redactStreamKey(rawValue) }

    /// Where the connection goes: scheme, host and port, for ``HTTPConnection`` (which takes a
    /// ``PushURL``; the root path makes it one whatever the path is).
    func connectionURL() throws(LivePushError) -> PushURL {
        try PushURL("\(secure ? "https" : "http")://\(authority)/")
    }

    /// A reference from a playlist resolved against this URL (RFC 3986 §5.2).
    func resolve(_ reference: String) throws(LivePushError) -> HLSURL {
        var text = reference
        if let hash = text.firstIndex(of: "#") { text = String(text[..<hash]) }
        let lower = text.lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") { return try HLSURL(text) }
        if let colon = text.firstIndex(of: ":"), !text[..<colon].contains("/"), !text[..<colon].contains("?") {
            throw LivePushError(.invalidURL, "not an http(s) URI: \(TerminalText.escape(text, limit: 80))")
        }
        let origin = "\(secure ? "https" : "http")://\(authority)"
        if text.hasPrefix("//") { return try HLSURL("\(secure ? "https" : "http"):\(text)") }
        var referencePath = text
        var referenceQuery: String?
        if let mark = text.firstIndex(of: "?") {
            referencePath = String(text[..<mark])
            referenceQuery = String(text[text.index(after: mark)...])
        }
        let resolvedPath: String
        if referencePath.isEmpty {
            resolvedPath = path
            if referenceQuery == nil, !query.isEmpty { referenceQuery = query }
        } else if referencePath.hasPrefix("/") {
            resolvedPath = LocationResolver.removeDotSegments(referencePath)
        } else {
            let directory = path.lastIndex(of: "/").map { String(path[...$0]) } ?? "/"
            resolvedPath = LocationResolver.removeDotSegments(directory + referencePath)
        }
        return try HLSURL(origin + resolvedPath + (referenceQuery.map { "?\($0)" } ?? ""))
    }
}
