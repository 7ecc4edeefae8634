/// An attribute list (RFC 8216 §4.2): `NAME=VALUE` pairs separated by commas, a value being a
/// quoted string (no CR, LF or `"` inside), a hexadecimal sequence, a number or an enumerated
/// string. Bounded: at most `limit` attributes, each name 64 characters, and the line bound
/// the parser applies before.
enum HLSAttributeList {
    /// The attributes by name, a quoted string without its quotes. Throws for a list that is not
    /// one (a name that is not `[A-Z0-9-]`, an unterminated quote, a repeated name).
    static func parse(_ text: String, limit: Int, line: Int) throws(HLSPlaylistParser.Failure) -> [String: String] {
        func fail(_ reason: String) -> HLSPlaylistParser.Failure { .init(line: line, reason: reason) }
        var attributes: [String: String] = [:]
        var rest = Substring(text)
        while !rest.isEmpty {
            guard attributes.count < limit else { throw fail("more than \(limit) attributes") }
            guard let equals = rest.firstIndex(of: "=") else { throw fail("an attribute without a value: \(HLSPlaylistParser.shown(rest))") }
            let name = rest[..<equals]
            guard !name.isEmpty, name.utf8.count <= 64,
                  name.utf8.allSatisfy({ (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }) else {
                throw fail("not an attribute name: \(HLSPlaylistParser.shown(name))")
            }
            rest = rest[rest.index(after: equals)...]
            let value: Substring
            if rest.hasPrefix("\"") {
                let body = rest.dropFirst()
                guard let close = body.firstIndex(of: "\"") else { throw fail("an unterminated quoted string") }
                value = body[..<close]
                rest = body[body.index(after: close)...]
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<end]
                rest = rest[end...]
            }
            guard attributes[String(name)] == nil else { throw fail("\(name) given twice") }
            attributes[String(name)] = String(value)
            if rest.hasPrefix(",") {
                rest = rest.dropFirst()
                guard !rest.isEmpty else { throw fail("a comma at the end of an attribute list") }
            } else if !rest.isEmpty {
                throw fail("expected a comma after \(name): \(HLSPlaylistParser.shown(rest))")
            }
        }
        return attributes
    }

    /// A decimal-floating-point (`12`, `5.005`): digits, at most one point, 32 characters; nil
    /// otherwise (no sign, exponent, `nan` or `inf`, which `Double(_:)` would take).
    static func decimal(_ text: some StringProtocol) -> Double? {
        let trimmed = text.utf8
        guard !trimmed.isEmpty, trimmed.count <= 32, trimmed.allSatisfy({ (0x30...0x39).contains($0) || $0 == 0x2E }),
              trimmed.filter({ $0 == 0x2E }).count <= 1, trimmed.first != 0x2E else { return nil }
        return Double(String(text))
    }

    /// A hexadecimal sequence (`0xFC30…`) as bytes; nil when it is not one (odd digits are
    /// read with a leading zero, as RFC 8216 §4.2 allows any number of digits).
    static func hexBytes(_ text: some StringProtocol, maxBytes: Int = 4096) -> [UInt8]? {
        guard text.hasPrefix("0x") || text.hasPrefix("0X") else { return nil }
        var digits = Array(text.utf8.dropFirst(2))
        guard !digits.isEmpty, digits.count <= 2 * maxBytes else { return nil }
        if digits.count % 2 == 1 { digits.insert(0x30, at: 0) }
        return HexDigits.bytes(digits)
    }
}
