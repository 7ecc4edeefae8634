/// Where a server's reconnect request may send the stream: the request's `tcUrl` resolved
/// against the current URL, or refused. Pure.
///
/// The `tcUrl` names the application only (`rtmp://host[:port]/app`, `//host/app` or `/app`, as
/// the Enhanced RTMP v2 spec allows); the stream name and its query (the stream key, an
/// auth_key) are the current URL's. So the rules are about where the key may go:
/// - `rtmp://` or `rtmps://` only, and an `rtmps://` push never moves to `rtmp://` (the key
///   would cross the network in clear);
/// - the same host only (any port): a key goes to its own origin and nowhere else, as HTTP
///   clients drop an `Authorization` header on a redirect to another host. A service that wants
///   the publisher on another host gives the user a new push URL. A request naming another host
///   is refused, with a warning event, and the push stays on its connection. (The host is
///   compared as written: `localhost` is not `127.0.0.1`; no name is resolved to decide.)
/// - no user information, query or fragment in the `tcUrl`, nothing but printable ASCII, at most
///   ``ServerReconnectRequest/maxTextLength`` characters.
enum ServerReconnectTarget {
    /// Why a request was not followed.
    enum Refusal: Error, Equatable {
        case tooLong
        case malformed
        case scheme
        case downgrade
        case otherHost(String)

        /// A sentence for the warning event (the server's host is escaped and cut).
        var reason: String {
            switch self {
            case .tooLong: "its tcUrl is longer than \(ServerReconnectRequest.maxTextLength) characters"
            case .malformed: "its tcUrl is not an application URL (rtmp[s]://host[:port]/app, //host/app or /app)"
            case .scheme: "its tcUrl is not rtmp:// or rtmps://"
            case .downgrade: "its tcUrl would move an rtmps:// push to rtmp:// (the stream key in clear)"
            case .otherHost(let host):
                "its tcUrl names another host (\(TerminalText.escape(host.prefix(64)))): the stream key goes to its own host only"
            }
        }
    }

    /// The URL to connect to for `request`, from the output's `current` URL.
    static func resolve(_ request: ServerReconnectRequest, current: PushURL) -> Result<PushURL, Refusal> {
        if request.tcUrlTooLong { return .failure(.tooLong) }
        guard let tcUrl = request.tcUrl else { return .success(current) }
        guard tcUrl.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }),
              !tcUrl.contains("@"), !tcUrl.contains("?"), !tcUrl.contains("#"), !tcUrl.contains("\\") else {
            return .failure(.malformed)
        }
        let currentScheme = current.scheme.rawValue
        let absolute: String
        if tcUrl.hasPrefix("//") {
            absolute = currentScheme + ":" + tcUrl
        } else if tcUrl.hasPrefix("/") {
            absolute = "\(currentScheme)://\(authority(of: current))\(tcUrl)"
        } else if tcUrl.contains("://") {
            absolute = tcUrl
        } else {
            return .failure(.malformed)
        }
        let trimmed = String(absolute.reversed().drop { $0 == "/" }.reversed())
        let stream = current.query.isEmpty ? current.streamName : current.streamName + "?" + current.query
        // The parse error is not dropped: any URL that does not parse is `.malformed`, which the
        // output reports as a `reconnectRequestFailed` warning (a code and the reason) and goes on.
        guard let application = try? PushURL(trimmed + "/x"),
              let target = try? PushURL(trimmed + "/" + stream) else {
            return .failure(.malformed)
        }
        guard application.scheme == .rtmp || application.scheme == .rtmps else { return .failure(.scheme) }
        if current.scheme == .rtmps && application.scheme != .rtmps { return .failure(.downgrade) }
        guard application.host.lowercased() == current.host.lowercased() else { return .failure(.otherHost(application.host)) }
        // The application part must be what the tcUrl named: a stream name it carried would
        // make the stream key someone else's path.
        guard target.streamName == current.streamName, !application.app.isEmpty else { return .failure(.malformed) }
        return .success(target)
    }

    /// `host[:port]` as the current URL was written (an IPv6 host in brackets).
    private static func authority(of url: PushURL) -> String {
        let host = url.host.contains(":") ? "[\(url.host)]" : url.host
        return "\(host):\(url.port)"
    }
}
