/// An Enhanced RTMP v2 `NetConnection.Connect.ReconnectRequest` (an `onStatus` of level
/// `status` on a published connection): the server asks the client to move, before maintenance
/// or to balance its load, to `tcUrl` when it names one, else to the same URL.
///
/// What the server wrote, bounded but not yet trusted: ``ServerReconnectTarget`` decides where
/// (and whether) the stream key may go.
struct ServerReconnectRequest: Sendable, Equatable {
    /// The status code that asks for it.
    static let code = "NetConnection.Connect.ReconnectRequest"
    /// Longest `tcUrl` or description kept (characters); a longer `tcUrl` is refused, a longer
    /// description cut.
    static let maxTextLength = 1024

    /// The new server, as written (absolute, `//host/app` or `/app`); nil: the current URL.
    let tcUrl: String?
    /// The server's words, escaped for terminals and cut to ``maxTextLength``.
    let description: String?
    /// The `tcUrl` was longer than ``maxTextLength`` (then `tcUrl` is nil and the request refused).
    let tcUrlTooLong: Bool

    init(tcUrl: String?, description: String?) {
        tcUrlTooLong = (tcUrl?.utf8.count ?? 0) > Self.maxTextLength
        self.tcUrl = tcUrlTooLong ? nil : tcUrl.flatMap { $0.isEmpty ? nil : $0 }
        self.description = description.map { TerminalText.escape(String($0.prefix(Self.maxTextLength))) }
    }

    /// The request a server reply carries, if it is one (level `status`, the reconnect code).
    init?(name: String, level: String?, code: String?, tcUrl: String?, description: String?) {
        guard name == "onStatus", level == "status", code == Self.code else { return nil }
        self.init(tcUrl: tcUrl, description: description)
    }
}
