/// JSON text written by hand, for the as-run log's lines (one line per record, in a fixed
/// field order, with no encoder to set up per line) and the CLI's JSON events.
package enum JSONText {
    /// `text` as a JSON string literal: quotes, backslashes and every control character escaped
    /// (a newline in a title would otherwise split the line).
    package static func string(_ text: String) -> String {
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            // C0 as JSON requires; DEL and C1 too, which a terminal showing the log would obey.
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
