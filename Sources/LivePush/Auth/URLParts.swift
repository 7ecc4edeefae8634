/// A URL string cut into its parts (RFC 3986's shape: `scheme://[userinfo@]host[:port]/path?query#fragment`)
/// for ``Redaction``. It never fails and never traps: any string has some parts, and what it
/// cannot place is left for the caller to mask.
///
/// The authority ends at the first `/`, `?` or `#`, and the user-info at the authority's last
/// `@`: an `@` in the query (`srt://h:1?streamid=alice@example.com`), the path or the fragment
/// is never taken for the end of a user-info (which once masked the host and showed the
/// passphrase after it).
struct URLParts {
    /// The scheme, without `://`; nil when the string has none (see ``isScheme(_:)``).
    var scheme: Substring?
    /// What introduced the authority: `scheme://`, `//`, or nothing (a string without a scheme
    /// whose first part holds an `@`: `user:pw@host/app/key`).
    var authorityPrefix: Substring = ""
    /// Everything before the authority's last `@` (without it); nil when it has none.
    var userInfo: Substring?
    /// `host[:port]` (`[v6]:port` too); nil when the string has no authority.
    var hostAndPort: Substring?
    /// From the end of the authority to the first `?` or `#`.
    var path: Substring
    /// After the `?`, up to the first `#`; nil when there is no `?` before any `#`.
    var query: Substring?
    /// After the first `#` (the rest of the string); nil when there is none.
    var fragment: Substring?
    /// Whether what follows the authority may be the rest of a user-info that a `/`, `?` or `#`
    /// in its password cut short (`rtmp://u:12/34@h/app`): an `@` there before any `=`. Then the
    /// "host" is part of a password. (An `@` in a parameter's value, `?streamid=a@b`, is not that.)
    var mayContinueUserInfo = false

    init(_ string: String) {
        var rest = string[...]
        var hasAuthority = false
        if let separator = string.firstRange(of: "://"), Self.isScheme(string[..<separator.lowerBound]) {
            scheme = string[..<separator.lowerBound]
            authorityPrefix = string[..<separator.upperBound]
            rest = string[separator.upperBound...]
            hasAuthority = true
        } else if string.hasPrefix("//") {
            authorityPrefix = string.prefix(2)
            rest = string.dropFirst(2)
            hasAuthority = true
        } else if string[..<(string.firstIndex(where: { "/?#".contains($0) }) ?? string.endIndex)].contains(where: { $0 == "@" || $0 == ":" }) {
            // No scheme, but a user-info or a port (`user:pw@host/app`, `host:1935/app`): when in
            // doubt, the first part is an authority, whose parts are checked and masked.
            hasAuthority = true
        }
        if hasAuthority {
            let end = rest.firstIndex(where: { "/?#".contains($0) }) ?? rest.endIndex
            let authority = rest[..<end]
            if let at = authority.lastIndex(of: "@") {
                userInfo = authority[..<at]
                hostAndPort = authority[authority.index(after: at)...]
            } else {
                hostAndPort = authority
            }
            rest = rest[end...]
            if userInfo == nil, let at = rest.firstIndex(of: "@") { mayContinueUserInfo = !rest[..<at].contains("=") }
        }
        let hash = rest.firstIndex(of: "#")
        let beforeFragment = rest[..<(hash ?? rest.endIndex)]
        if let hash { fragment = rest[rest.index(after: hash)...] }
        if let question = beforeFragment.firstIndex(of: "?") {
            path = beforeFragment[..<question]
            query = beforeFragment[beforeFragment.index(after: question)...]
        } else {
            path = beforeFragment
        }
    }

    /// What comes before `://` is taken for a scheme unless it holds a `/`, `?`, `#`, `@` or `:`
    /// (then the `://` is inside a path or a query). A scheme no URL may have (`1rtmp`) still is
    /// one here: the rest has a URL's shape, and its parts are masked as a URL's are.
    static func isScheme(_ text: Substring) -> Bool {
        !text.isEmpty && !text.contains(where: { "/?#@:".contains($0) })
    }

    /// Whether `host[:port]` looks like one: a name or IPv4 address (letters, digits, `.-_~%`),
    /// a bracketed IPv6 address, or a bare one (hex digits, `:` and `.`), with digits as the port.
    /// Anything else (`u:pw` before a `?` or `/` that was meant to be part of a password) is no
    /// host, and its caller masks it.
    static func isHostAndPort(_ text: Substring) -> Bool {
        func isPort(_ port: Substring) -> Bool { port.unicodeScalars.allSatisfy { ("0"..."9").contains($0) } }
        func isName(_ host: Substring) -> Bool {
            host.unicodeScalars.allSatisfy { isASCIIAlphanumeric($0) || ".-_~%".unicodeScalars.contains($0) || $0.value > 0x7F && Character($0).isLetter }
        }
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return false }
            let address = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            let addressOK = address.unicodeScalars.allSatisfy { isASCIIAlphanumeric($0) || ":.%-_".unicodeScalars.contains($0) }
            return addressOK && (after.isEmpty || after.hasPrefix(":") && isPort(after.dropFirst()))
        }
        let colons = text.filter { $0 == ":" }.count
        if colons > 1 {
            return text.unicodeScalars.allSatisfy { $0.properties.isASCIIHexDigit || ":.".unicodeScalars.contains($0) }
        }
        guard let colon = text.firstIndex(of: ":") else { return isName(text) }
        return isName(text[..<colon]) && isPort(text[text.index(after: colon)...])
    }

    static func isASCIIAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
    }
}
