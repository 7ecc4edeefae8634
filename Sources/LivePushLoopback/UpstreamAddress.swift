/// `host:port`, `[v6]:port`, `host` (port 1935) or an `rtmp://host[:port]/...` URL.
struct UpstreamAddress: Sendable, Equatable, CustomStringConvertible {
    var host: String
    var port: Int

    init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    init?(_ text: String) {
        var s = Substring(text.trimmingSpaces)
        if let scheme = s.firstRange(of: "://") {
            guard s[..<scheme.lowerBound].lowercased().hasPrefix("rtmp") else { return nil }
            s = s[scheme.upperBound...]
            if let slash = s.firstIndex(of: "/") { s = s[..<slash] }
            if let at = s.lastIndex(of: "@") { s = s[s.index(after: at)...] }
        }
        guard !s.isEmpty else { return nil }
        var host: Substring
        var portText: Substring?
        if s.first == "[" {
            guard let close = s.firstIndex(of: "]") else { return nil }
            host = s[s.index(after: s.startIndex)..<close]
            let rest = s[s.index(after: close)...]
            if rest.first == ":" { portText = rest.dropFirst() } else if !rest.isEmpty { return nil }
        } else if let colon = s.lastIndex(of: ":"), s.firstIndex(of: ":") == colon {
            host = s[..<colon]
            portText = s[s.index(after: colon)...]
        } else {
            host = s
        }
        guard !host.isEmpty else { return nil }
        var port = 1935
        if let portText {
            guard let p = Int(portText), p > 0, p < 65_536 else { return nil }
            port = p
        }
        self.host = String(host)
        self.port = port
    }

    /// An SRT listener: `host:port`, `[v6]:port` or `srt://host:port[?options]`; the port is required.
    init?(srt text: String) {
        var s = Substring(text.trimmingSpaces)
        if let scheme = s.firstRange(of: "://") {
            guard s[..<scheme.lowerBound].lowercased() == "srt" else { return nil }
            s = s[scheme.upperBound...]
            if let end = s.firstIndex(where: { $0 == "?" || $0 == "/" }) { s = s[..<end] }
        }
        guard s.hasSuffix("]") == false, s.contains(":"), let address = UpstreamAddress(String(s)) else { return nil }
        self = address
    }

    var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
