import CFFmpeg

/// A network input's URL split as libavformat splits it (`av_url_split`, which its protocols
/// use to connect): the host and port judged are the host and port that would be reached.
/// A parser of our own could read `http://a@b/` or `srt://[x]:1` differently from libavformat,
/// and the difference would be a way around the rules.
struct InputURL: Sendable, Equatable {
    /// The scheme, lowercased.
    var scheme: String
    /// The host as libavformat reads it (brackets of an IPv6 literal removed); empty when none.
    var host: String
    /// The port; nil when the URL gives none.
    var port: Int?
    /// `key=value` pairs after the first `?`, in order (as libavformat's protocols read them).
    var query: [(key: String, value: String)]

    init?(_ url: String) {
        // What a URL cannot carry: libavformat would pass it on as it is.
        guard !url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else { return nil }
        var proto = [CChar](repeating: 0, count: 32)
        var auth = [CChar](repeating: 0, count: 1024)
        var hostname = [CChar](repeating: 0, count: 1024)
        var path = [CChar](repeating: 0, count: 4096)
        var port: Int32 = -1
        av_url_split(&proto, Int32(proto.count), &auth, Int32(auth.count), &hostname, Int32(hostname.count), &port,
                     &path, Int32(path.count), url)
        scheme = String(decoding: proto.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).lowercased()
        host = String(decoding: hostname.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard !scheme.isEmpty else { return nil }
        self.port = port >= 0 ? Int(port) : nil
        query = []
        if let mark = url.firstIndex(of: "?") {
            for pair in url[url.index(after: mark)...].split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                query.append((String(parts[0]), parts.count > 1 ? String(parts[1]) : ""))
            }
        }
    }

    static func == (lhs: InputURL, rhs: InputURL) -> Bool {
        lhs.scheme == rhs.scheme && lhs.host == rhs.host && lhs.port == rhs.port
            && lhs.query.map(\.key) == rhs.query.map(\.key) && lhs.query.map(\.value) == rhs.query.map(\.value)
    }
}
