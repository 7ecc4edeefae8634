/// Reads and rewrites the query of a push URL without touching anything else in it.
///
/// Parameters are kept in their order and exactly as written (no percent-decoding or
/// re-encoding): a signed URL must reach the server byte for byte as it was signed.
package enum PushURLQuery {
    /// The `name=value` pairs of a query string (without the leading `?`), in order.
    /// A parameter without `=` has an empty value.
    package static func parameters(_ query: some StringProtocol) -> [(name: String, value: String)] {
        query.split(separator: "&").map { pair in
            guard let eq = pair.firstIndex(of: "=") else { return (String(pair), "") }
            return (String(pair[..<eq]), String(pair[pair.index(after: eq)...]))
        }
    }

    /// Every value of the parameter `name` (case-sensitive, as servers compare it).
    package static func values(of name: String, inQuery query: some StringProtocol) -> [String] {
        parameters(query).filter { $0.name == name }.map(\.value)
    }

    /// The query part of a URL string (after the first `?`, before any `#`), empty when absent.
    package static func query(ofURL url: String) -> Substring {
        guard let q = url.firstIndex(of: "?") else { return "" }
        let rest = url[url.index(after: q)...]
        return rest.firstIndex(of: "#").map { rest[..<$0] } ?? rest
    }

    /// `url` with the parameter `name` set to `value`: the first occurrence is replaced in
    /// place and any further occurrences are removed; when absent it is appended. Every other
    /// parameter, and everything before the `?`, is kept as it was.
    package static func setting(_ name: String, to value: String, inURL url: String) -> String {
        let base: Substring
        let query: Substring
        let fragment: Substring
        if let q = url.firstIndex(of: "?") {
            base = url[..<q]
            let rest = url[url.index(after: q)...]
            if let hash = rest.firstIndex(of: "#") {
                query = rest[..<hash]
                fragment = rest[hash...]
            } else {
                query = rest
                fragment = ""
            }
        } else if let hash = url.firstIndex(of: "#") {
            base = url[..<hash]
            query = ""
            fragment = url[hash...]
        } else {
            base = url[...]
            query = ""
            fragment = ""
        }
        var pairs: [String] = []
        var replaced = false
        for pair in query.split(separator: "&") {
            let pairName = pair.firstIndex(of: "=").map { pair[..<$0] } ?? pair
            if pairName == name {
                if !replaced { pairs.append("\(name)=\(value)") }
                replaced = true
            } else {
                pairs.append(String(pair))
            }
        }
        if !replaced { pairs.append("\(name)=\(value)") }
        return String(base) + "?" + pairs.joined(separator: "&") + String(fragment)
    }
}
