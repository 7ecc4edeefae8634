/// Text from a peer (a server's status description, a publisher's app or stream name) made
/// safe for a terminal or a log line.
///
/// A peer's string could carry escape sequences (clearing the screen, rewriting what was
/// printed, setting the window title), a newline followed by a fake log line, or bidi controls
/// that show text in another order than it is. Each such character is written out visibly
/// (`\x1b`, `\n`, `\u{202E}`), and the text is cut to `limit` characters.
package enum TerminalText {
    /// Writes control characters out visibly and cuts the text to `limit` characters.
    package static func escape(_ text: some StringProtocol, limit: Int = 512) -> String {
        var out = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count >= limit {
                out += "…"
                break
            }
            count += 1
            switch scalar.value {
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x5C: out += "\\\\"
            case 0x00...0x1F, 0x7F...0x9F:
                out += "\\x" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
            case 0x2028, 0x2029, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x061C, 0xFEFF:
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
