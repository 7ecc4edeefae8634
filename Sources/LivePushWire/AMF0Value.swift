/// A value of the AMF0 data format (Action Message Format, version 0) as used by RTMP
/// command and data messages.
///
/// Strings longer than 65535 UTF-8 bytes are written as AMF0 "long string" by ``AMF0``;
/// long strings and XML documents decode to ``string(_:)``, typed objects decode to ``object(_:)``.
public enum AMF0Value: Sendable, Equatable {
    case number(Double)
    case boolean(Bool)
    case string(String)
    case object([AMF0Property])
    case null
    case undefined
    case ecmaArray([AMF0Property])
    case strictArray([AMF0Value])
    /// Milliseconds since the Unix epoch (the time-zone field is written as 0 and ignored on read).
    case date(Double)
}

extension AMF0Value {
    /// The number if this is `.number`, else nil.
    public var numberValue: Double? {
        if case .number(let n) = self { return n }
        return nil
    }

    /// The string if this is `.string`, else nil.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The boolean if this is `.boolean`, else nil.
    public var boolValue: Bool? {
        if case .boolean(let b) = self { return b }
        return nil
    }

    /// The properties if this is `.object` or `.ecmaArray`, else nil.
    public var properties: [AMF0Property]? {
        switch self {
        case .object(let p), .ecmaArray(let p): return p
        default: return nil
        }
    }

    /// The value of the first property named `key` of an object or ECMA array.
    public subscript(key: String) -> AMF0Value? {
        properties?.first(where: { $0.key == key })?.value
    }
}

extension AMF0Value: CustomStringConvertible {
    public var description: String {
        switch self {
        case .number(let n): return n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n)
        case .boolean(let b): return String(b)
        case .string(let s): return "\"\(s)\""
        case .object(let p): return "{" + p.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .null: return "null"
        case .undefined: return "undefined"
        case .ecmaArray(let p): return "[" + p.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "]"
        case .strictArray(let v): return "[" + v.map(\.description).joined(separator: ", ") + "]"
        case .date(let d): return "date(\(d))"
        }
    }
}
