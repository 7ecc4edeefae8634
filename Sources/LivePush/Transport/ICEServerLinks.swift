/// Reads the ICE servers out of the `Link` fields of a WHIP answer (RFC 9725 §4.4, with the
/// syntax of RFC 8288):
///
///     Link: <stun:stun.example.net>; rel="ice-server"
///     Link: <turn:turn.example.net?transport=udp>; rel="ice-server";
///           username="user"; credential="pass"; credential-type="password"
///
/// A field may hold several links separated by commas, and there may be several fields.
/// Links of another relation (an endpoint may also announce other things) and URIs that are
/// no STUN or TURN server (or whose host and port do not read, see ``ICEServer/webrtcbinURI``) are
/// skipped, not refused: the session works without them.
enum ICEServerLinks {
    static func parse(_ fieldValues: [String]) -> [ICEServer] {
        fieldValues.flatMap(links).compactMap(iceServer)
    }

    private struct Link {
        var target: String
        var parameters: [(name: String, value: String)]
    }

    private static let schemes: Set<String> = ["stun", "stuns", "turn", "turns"]

    private static func iceServer(_ link: Link) -> ICEServer? {
        func parameter(_ name: String) -> String? { link.parameters.first { $0.name == name }?.value }
        // rel may list several relation types, separated by spaces.
        guard let rel = parameter("rel"),
              rel.lowercased().split(separator: " ").contains("ice-server"),
              let colon = link.target.firstIndex(of: ":"),
              schemes.contains(link.target[..<colon].lowercased())
        else { return nil }
        // credential-type "password" is the only one defined; a credential of another type
        // (the withdrawn "oauth") would be handed to TURN as a password and fail there.
        if let type = parameter("credential-type"), type.lowercased() != "password" { return nil }
        let server = ICEServer(url: link.target, username: parameter("username"), credential: parameter("credential"))
        // `<stun:?>`, `<turn:>`, `<stun:a@b/c>`: no server webrtcbin could be given; skipped like the rest.
        return server.webrtcbinURI == nil ? nil : server
    }

    /// The links of one field value. Commas and semicolons inside `<...>` and quoted strings
    /// belong to the URI or the value, not to the list.
    private static func links(_ value: String) -> [Link] {
        var result: [Link] = []
        var scanner = Scanner(Array(value.unicodeScalars))
        while true {
            scanner.skip { $0 == "," || $0 == " " || $0 == "\t" }
            guard let first = scanner.peek else { return result }
            guard first == "<", let target = scanner.take(until: ">") else {
                // Not a link: skip to the next element of the list.
                scanner.skipElement()
                continue
            }
            var link = Link(target: target.trimmingBlanks, parameters: [])
            while true {
                scanner.skip { $0 == " " || $0 == "\t" }
                guard scanner.peek == ";" else { break }
                scanner.advance()
                scanner.skip { $0 == " " || $0 == "\t" }
                let name = scanner.token { $0 != "=" && $0 != ";" && $0 != "," }.trimmingBlanks.lowercased()
                var parameterValue = ""
                if scanner.peek == "=" {
                    scanner.advance()
                    scanner.skip { $0 == " " || $0 == "\t" }
                    parameterValue = scanner.peek == "\"" ? scanner.quoted() : scanner.token { $0 != ";" && $0 != "," }.trimmingBlanks
                }
                // RFC 8288 §3: only the first occurrence of a parameter counts.
                if !name.isEmpty, !link.parameters.contains(where: { $0.name == name }) {
                    link.parameters.append((name, parameterValue))
                }
            }
            result.append(link)
            scanner.skipElement()
        }
    }

    /// A cursor over a field value's characters.
    private struct Scanner {
        private let scalars: [Unicode.Scalar]
        private var index = 0

        init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

        var peek: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

        mutating func advance() { index += 1 }

        mutating func skip(while matches: (Unicode.Scalar) -> Bool) {
            while let c = peek, matches(c) { index += 1 }
        }

        /// Characters while `matches` holds.
        mutating func token(while matches: (Unicode.Scalar) -> Bool) -> String {
            var text = String.UnicodeScalarView()
            while let c = peek, matches(c) {
                text.append(c)
                index += 1
            }
            return String(text)
        }

        /// After the opening character: the text up to `end`, consumed with it; nil when it never comes.
        mutating func take(until end: Unicode.Scalar) -> String? {
            let start = index
            advance()
            let text = token { $0 != end }
            guard peek == end else {
                index = start
                return nil
            }
            advance()
            return text
        }

        /// A quoted string at the cursor, without its quotes and with `\x` read as `x`.
        mutating func quoted() -> String {
            advance()
            var text = String.UnicodeScalarView()
            while let c = peek {
                index += 1
                if c == "\"" { break }
                if c == "\\", let escaped = peek {
                    text.append(escaped)
                    index += 1
                } else {
                    text.append(c)
                }
            }
            return String(text)
        }

        /// Skips to just after the next comma outside quotes and `<...>` (or to the end).
        mutating func skipElement() {
            var inQuotes = false
            var inBrackets = false
            while let c = peek {
                index += 1
                if inQuotes {
                    if c == "\\" { index += 1 } else if c == "\"" { inQuotes = false }
                } else if inBrackets {
                    if c == ">" { inBrackets = false }
                } else if c == "\"" {
                    inQuotes = true
                } else if c == "<" {
                    inBrackets = true
                } else if c == "," {
                    return
                }
            }
        }
    }
}

private extension String {
    var trimmingBlanks: String {
        let blank: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" }
        return String(String.UnicodeScalarView(unicodeScalars.drop(while: blank).reversed().drop(while: blank).reversed()))
    }
}
