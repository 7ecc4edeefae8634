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

    var description: String {
        var text = url
        if let username { text += " username=\(username)" }
        if let credential { text += " credential=\(Redaction.mask(credential))" }
        return text
    }
}
