/// Masks secrets before anything is logged, printed or put in an error.
///
/// A push URL's query can carry an `auth_key` (whose hash lets anyone publish until it
/// expires) or a token; only a short prefix survives so that two URLs can still be told apart.
public enum Redaction {
    /// Query parameters whose values are shown as they are (compared without case). Every other
    /// value is masked: CDNs name their secrets freely (`txSecret`, `wsSecret`, `sig`,
    /// `access_token`, …), so a list of secret names always misses one. These say when a
    /// signature expires or which virtual host is meant, never who may publish.
    /// An `srt://` URL's transport settings are harmless too; its `passphrase` and `streamid` are not;
    /// so are an HLS output's segmenting options.
    public static let harmlessParameters: Set<String> = [
        "vhost", "txtime", "wstime", "expire", "expires", "domain",
        "mode", "latency", "rcvlatency", "peerlatency", "pbkeylen", "connect_timeout", "transtype", "payload_size",
        "pkt_size", "maxbw", "oheadbw", "inputbw", "tlpktdrop", "transport",
        "hls_time", "hls_list_size", "hls_segment_type",
    ]

    /// Query parameters whose values are masked whole, not cut to a prefix: passwords (4
    /// characters of one are too much to show). Compared without case; a name with a percent escape
    /// (`pass%70hrase`) is no plain name, and its item is masked whole.
    public static let passwordParameters: Set<String> = ["passphrase", "password", "passwd", "pass", "pwd"]

    /// Keeps the first 4 characters of a secret value and masks the rest.
    public static func mask(_ value: some StringProtocol) -> String {
        value.count <= 4 ? "****" : "\(value.prefix(4))****"
    }

    /// ``redactURL(_:)``, and the stream name too (an RTMP stream key: `rtmp://host/app/abcd****`):
    /// what events, errors, the channels API and logs show of an output or a live input.
    /// The stream name is the path's last segment when another comes before it (or when the
    /// string has neither scheme nor host: a key pasted alone).
    public static func redactStreamKey(_ url: String) -> String {
        redact(url, maskingStreamName: true)
    }

    /// Masks a URL string's user-info, every query (and fragment) value but the
    /// ``harmlessParameters``, and any path segment holding an `@`. The string is parsed as a
    /// URL (`URLParts`), so an `@` in the query or the fragment is no user-info; what does not
    /// parse as a host is masked too.
    public static func redactURL(_ url: String) -> String {
        redact(url, maskingStreamName: false)
    }

    /// Free text that may quote a URL (a server's reason for a refusal:
    /// `NetStream.Publish.BadName: Already publishing`, or `… rtmp://h/app?auth_key=…`): each
    /// space-separated word holding a URL (`://`) is redacted as ``redactStreamKey(_:)`` does, a
    /// `name=value` word as a query is, a word with an `@` is masked whole; the other words stay.
    public static func redactText(_ text: String) -> String {
        text.split(separator: " ", omittingEmptySubsequences: false).map { word -> String in
            if word.contains("://") { return redactStreamKey(String(word)) }
            if word.contains("@") { return "****" }
            if word.contains("=") { return redactParameters(word) }
            return String(word)
        }.joined(separator: " ")
    }

    private static func redact(_ url: String, maskingStreamName: Bool) -> String {
        let parts = URLParts(url)
        var result = String(parts.authorityPrefix)
        if parts.userInfo != nil { result += "****@" }
        if let hostAndPort = parts.hostAndPort {
            result += URLParts.isHostAndPort(hostAndPort) && !parts.mayContinueUserInfo ? String(hostAndPort) : "****"
        }
        // A string with neither a scheme nor an authority may be a stream key pasted alone.
        let alone = parts.scheme == nil && parts.hostAndPort == nil
        result += redactPath(parts.path, maskingStreamName: maskingStreamName, minimumSegments: alone ? 1 : 2)
        if let query = parts.query { result += "?" + redactParameters(query) }
        // A fragment never goes to a server, but an SRT stream id starts with `#`
        // (`streamid=#!::r=live,u=alice&passphrase=…`) and SRT URLs are read on past it (here as by FFmpeg): its values are
        // masked as the query's are.
        if let fragment = parts.fragment { result += "#" + redactParameters(fragment) }
        return result
    }

    /// A segment with an `@` (a user-info split by a `/` in its password) is masked; with
    /// `maskingStreamName`, the last non-empty segment too when the path has `minimumSegments`
    /// non-empty ones (2: an RTMP app comes before the stream name).
    private static func redactPath(_ path: Substring, maskingStreamName: Bool, minimumSegments: Int) -> String {
        var segments = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        // Whole: its first characters may be a password's.
        for index in segments.indices where segments[index].contains("@") { segments[index] = "****" }
        let named = segments.indices.filter { !segments[$0].isEmpty }
        if maskingStreamName, named.count >= minimumSegments, let last = named.last {
            segments[last] = mask(segments[last])
        }
        return segments.joined(separator: "/")
    }

    /// `name=value&…`: a value is shown only when its name is harmless and it looks like a
    /// setting (letters, digits, `.-_:~`), a password is masked whole, any other value cut to 4
    /// characters. An item whose name is no plain name (`y://h/app/key?k=…`: a URL that did not
    /// parse as one) is masked whole.
    static func redactParameters(_ text: Substring) -> String {
        text.split(separator: "&", omittingEmptySubsequences: false).map { item -> String in
            guard !item.isEmpty else { return "" }
            // An item that is no `name=value` may be the end of a password cut short by a `?` or
            // `#` (`rtmp://u:12?34@h/app`): with an `@`, none of it is shown.
            let wholeMask = item.contains("@") ? "****" : mask(item)
            guard let eq = item.firstIndex(of: "=") else {
                return isPlain(item) && harmlessParameters.contains(item.lowercased()) ? String(item) : wholeMask
            }
            let name = item[..<eq]
            let value = item[item.index(after: eq)...]
            guard isPlain(name) else { return wholeMask }
            if value.isEmpty { return String(item) }
            if harmlessParameters.contains(name.lowercased()) && isPlain(value, allowing: ":~") { return String(item) }
            return "\(name)=" + (passwordParameters.contains(name.lowercased()) ? "****" : mask(value))
        }.joined(separator: "&")
    }

    /// Letters, digits, `.`, `-`, `_` (and `extra`), ASCII only.
    private static func isPlain(_ text: Substring, allowing extra: String = "") -> Bool {
        !text.isEmpty && text.unicodeScalars.allSatisfy {
            URLParts.isASCIIAlphanumeric($0) || "._-".unicodeScalars.contains($0) || extra.unicodeScalars.contains($0)
        }
    }
}

extension Redaction {
    /// Masks the HASH of an `auth_key` value (`TIMESTAMP-RAND-UID-HASH`), keeping the
    /// non-secret fields: `1700000000-0-0-abcd****`. A value that does not have that shape
    /// (a numeric TIMESTAMP, alphanumeric RAND and UID) is masked as a whole.
    public static func redactAuthKey(_ value: some StringProtocol) -> String {
        let parts = value.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 4, !parts[0].isEmpty, parts[0].utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              AuthKey.isToken(parts[1]), AuthKey.isToken(parts[2])
        else { return mask(value) }
        return parts[0..<3].joined(separator: "-") + "-" + mask(parts[3])
    }
}
