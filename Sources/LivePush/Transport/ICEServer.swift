/// A STUN or TURN server a WHIP endpoint offered in a `Link` field of its answer
/// (RFC 9725 §4.4), for webrtcbin's `stun-server` / `add-turn-server`.
struct ICEServer: Sendable, Equatable, CustomStringConvertible {
    /// `stun:host:port`, `turn:host:port?transport=udp`, as the endpoint sent it.
    var url: String
    var username: String?
    /// A TURN password: never printed (``description`` masks it).
    var credential: String?

    init(url: String, username: String? = nil, credential: String? = nil) {
        self.url = url
        self.username = username
        self.credential = credential
    }

    /// webrtcbin's form: `stun://host:port`, or `turn(s)://user:password@host:port` (the
    /// credentials percent-escaped); nil for a URI it cannot take.
    ///
    /// The URI is the endpoint's text: `stun:?`, `turn:` or `stun:a@b/c` must come to nil, not
    /// to a trap or to a URI that names something else (RFC 7064/7065: `host[:port][?transport=…]`).
    var webrtcbinURI: String? {
        guard let colon = url.firstIndex(of: ":") else { return nil }
        let scheme = url[..<colon].lowercased()
        let hostPort = url[url.index(after: colon)...].prefix { $0 != "?" }
        guard Self.isHostAndPort(hostPort) else { return nil }
        switch scheme {
        case "stun", "stuns": return "stun://\(hostPort)"
        case "turn", "turns":
            return "\(scheme)://\(Self.percentEscaped(username ?? "")):\(Self.percentEscaped(credential ?? ""))@\(hostPort)"
        default: return nil
        }
    }

    var description: String {
        var text = url
        if let username { text += " username=\(username)" }
        if let credential { text += " credential=\(Redaction.mask(credential))" }
        return text
    }

    /// `host`, `host:port`, `[v6]` or `[v6]:port`: a host of letters, digits, `.`, `-`, `_` (or an
    /// IPv6 address in brackets) and a port from 1 to 65535.
    static func isHostAndPort(_ text: Substring) -> Bool {
        let host: Substring
        var port: Substring?
        if text.first == "[" {
            guard let close = text.firstIndex(of: "]") else { return false }
            host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { return false }
                port = after.dropFirst()
            }
            guard host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return false }
        } else {
            if let colon = text.firstIndex(of: ":") {
                host = text[..<colon]
                port = text[text.index(after: colon)...]
            } else {
                host = text
            }
            guard host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-_".contains($0)) }) else { return false }
        }
        guard !host.isEmpty else { return false }
        guard let port else { return true }
        guard (1...5).contains(port.count), port.allSatisfy({ $0.isASCII && $0.isNumber }),
              let number = Int(port), (1...65535).contains(number) else { return false }
        return true
    }

    /// `text` with every byte but the unreserved ones (RFC 3986 §2.3) as `%XX`.
    private static func percentEscaped(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF")
        return text.utf8.map { byte in
            let c = Character(Unicode.Scalar(byte))
            let plain = byte < 0x80 && (c.isLetter || c.isNumber || "-._~".contains(c))
            return plain ? String(c) : "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 0x0F)])
        }.joined()
    }
}
