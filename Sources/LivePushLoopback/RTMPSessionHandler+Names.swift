import LivePushWire

/// What the session handler makes of names and numbers a peer sends: nothing it takes from
/// the wire is used as it came.
extension RTMPSessionHandler {
    /// A message stream id from an AMF0 number: a whole number from 0 to 2^32 − 1, else nil.
    static func streamID(_ number: Double) -> UInt32? {
        guard number.isFinite, number >= 0, number <= Double(UInt32.max), number.rounded(.towardZero) == number else { return nil }
        return UInt32(number)
    }

    /// The name of a command message (its first value), read without decoding the rest; nil when
    /// it does not start with a string (or with no decodable value: the full decode that follows
    /// then refuses it as a protocol error).
    static func commandName(_ message: RTMPMessage) -> String? {
        var offset = message.type == .commandAMF3 && message.payload.first == 0 ? 1 : 0
        guard let value = try? AMF0.decodeValue(message.payload, offset: &offset) else { return nil }
        return value.stringValue
    }

    /// The stream name without a `?query` part.
    static func streamName(_ raw: String) -> String {
        String(raw.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
    }

    /// A safe file name for a stream name: every character that is not plainly printable or
    /// could reach outside the directory (NUL, which would cut the path at `open`; `/`, `\`;
    /// control and format characters, such as bidi overrides) becomes `_`, a leading dot gets a
    /// `_` before it (no hidden files, no `..`), and a name longer than 160 bytes is cut and
    /// ends in a hash of the whole, so it stays unique and within a file system's 255.
    static func fileName(_ stream: String) -> String {
        var name = String(String.UnicodeScalarView(stream.unicodeScalars.map { scalar in
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned:
                return "_"
            default:
                return scalar == "/" || scalar == "\\" ? "_" : scalar
            }
        }))
        if name.isEmpty || name.hasPrefix(".") { name = "_" + name }
        if name.utf8.count > 160 {
            var cut = ""
            for character in name {
                if cut.utf8.count + character.utf8.count > 140 { break }
                cut.append(character)
            }
            // FNV-1a: a stable, dependency-free digest; uniqueness among names, not secrecy.
            let hash = stream.utf8.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
            name = cut + "-" + String(hash, radix: 16)
        }
        return name
    }
}
