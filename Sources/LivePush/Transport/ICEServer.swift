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
    var webrtcbinURI: String? {
        let parts = url.split(separator: ":", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let scheme = parts[0].lowercased()
        let hostPort = parts[1].split(separator: "?")[0]
        switch scheme {
        case "stun", "stuns": return "stun://\(hostPort)"
        case "turn", "turns":
            func escaped(_ text: String) -> String {
                let hex = Array("0123456789ABCDEF")
                return text.utf8.map { byte in
                    let c = Character(Unicode.Scalar(byte))
                    let plain = byte < 0x80 && (c.isLetter || c.isNumber || "-._~".contains(c))
                    return plain ? String(c) : "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 0x0F)])
                }.joined()
            }
            return "\(scheme)://\(escaped(username ?? "")):\(escaped(credential ?? ""))@\(hostPort)"
        default: return nil
        }
    }

    var description: String {
        var text = url
        if let username { text += " username=\(username)" }
        if let credential { text += " credential=\(Redaction.mask(credential))" }
        return text
    }
}
