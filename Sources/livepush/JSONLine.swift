import LivePush

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
        JSONText.string(s)
    }
}
