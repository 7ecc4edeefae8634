/// A minimal JSON value for one-object-per-line output; keeps the CLI free of Foundation.
enum JSONValue {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case object([(String, JSONValue)])
    case array([JSONValue])
    case null
    /// Text that is JSON already (an as-run line, ``AsRunRecord/jsonLine``), put in as it is.
    case raw(String)

    var encoded: String {
        switch self {
        case .null: return "null"
        case .raw(let json): return json
        case .string(let s): return Self.quote(s)
        case .int(let i): return String(i)
        case .double(let d): return d.isFinite ? String(d) : "null"
        case .bool(let b): return b ? "true" : "false"
        case .object(let fields):
            return "{" + fields.map { "\(Self.quote($0.0)):\($0.1.encoded)" }.joined(separator: ",") + "}"
        case .array(let values):
            return "[" + values.map(\.encoded).joined(separator: ",") + "]"
        }
    }

    private static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            // C0 as JSON requires; DEL and C1 too, which a terminal showing the line would obey.
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value):
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
