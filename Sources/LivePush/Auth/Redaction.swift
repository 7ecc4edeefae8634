/// Masks secrets before anything is logged, printed or put in an error.
///
/// A push URL's query can carry an `auth_key` (whose hash lets anyone publish until it
/// expires) or a token; only a short prefix survives so that two URLs can still be told apart.
public enum Redaction {
    /// Query parameters whose values are shown as they are (compared without case). Every other
    /// value is masked: CDNs name their secrets freely (`txSecret`, `wsSecret`, `sig`,
    /// `access_token`, …), so a list of secret names always misses one. These say when a
    /// signature expires or which virtual host is meant, never who may publish.
    /// An `srt://` URL's transport settings are harmless too; its `passphrase` and `streamid` are not.
    public static let harmlessParameters: Set<String> = [
        "vhost", "txtime", "wstime", "expire", "expires", "domain",
        "mode", "latency", "rcvlatency", "peerlatency", "pbkeylen", "connect_timeout", "transtype", "payload_size",
        "pkt_size", "maxbw", "oheadbw", "inputbw", "tlpktdrop",
    ]

    /// Keeps the first 4 characters of a secret value and masks the rest.
    public static func mask(_ value: some StringProtocol) -> String {
        value.count <= 4 ? "****" : "\(value.prefix(4))****"
    }

    /// ``redactURL(_:)``, and the stream name too (an RTMP stream key: `rtmp://host/app/abcd****`):
    /// what the channels API and its logs show of an output.
    public static func redactStreamKey(_ url: String) -> String {
        let redacted = redactURL(url)
        // The query starts after the scheme: a "?" before it (a string that is no URL) must not
        // end the name before it begins.
        guard let scheme = redacted.firstRange(of: "://") else { return redacted }
        let end = redacted[scheme.upperBound...].firstIndex(of: "?") ?? redacted.endIndex
        guard let slash = redacted[scheme.upperBound..<end].lastIndex(of: "/"),
              redacted[scheme.upperBound..<slash].contains("/") else { return redacted }
        let name = redacted[redacted.index(after: slash)..<end]
        guard !name.isEmpty else { return redacted }
        return String(redacted[...slash]) + mask(name) + String(redacted[end...])
    }

    /// Masks every query value but the ``harmlessParameters``, and a password in the authority,
    /// of a URL string.
    public static func redactURL(_ url: String) -> String {
        var result = url
        if let schemeEnd = result.firstRange(of: "://"),
           let at = result[schemeEnd.upperBound...].firstIndex(of: "@"),
           !result[schemeEnd.upperBound..<at].contains("/") {
            result.replaceSubrange(schemeEnd.upperBound..<at, with: "****")
        }
        guard let q = result.firstIndex(of: "?") else { return result }
        let query = result[result.index(after: q)...]
        let parameters = query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            guard let eq = pair.firstIndex(of: "=") else { return String(pair) }
            let name = pair[..<eq]
            guard !harmlessParameters.contains(name.lowercased()) else { return String(pair) }
            return "\(name)=\(mask(pair[pair.index(after: eq)...]))"
        }
        return String(result[...q]) + parameters.joined(separator: "&")
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
