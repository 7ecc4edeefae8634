/// An error decoding AMF0 data.
public struct AMF0Error: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The input ended in the middle of a value.
        case truncated
        /// A type marker that AMF0 does not define.
        case unknownMarker(UInt8)
        /// A type marker that is valid AMF0 but not supported (reference, AMF3 switch, movieclip, recordset).
        case unsupportedMarker(UInt8)
        /// A string that is not valid UTF-8.
        case invalidUTF8
        /// Objects nested deeper than the decoder allows.
        case nestingTooDeep
    }

    public var kind: Kind
    /// Byte offset in the input where the problem was found.
    public var offset: Int

    public init(_ kind: Kind, offset: Int) {
        self.kind = kind
        self.offset = offset
    }

    public var description: String {
        switch kind {
        case .truncated: return "AMF0: truncated input at offset \(offset)"
        case .unknownMarker(let m): return "AMF0: unknown type marker 0x\(String(m, radix: 16)) at offset \(offset)"
        case .unsupportedMarker(let m): return "AMF0: unsupported type marker 0x\(String(m, radix: 16)) at offset \(offset)"
        case .invalidUTF8: return "AMF0: invalid UTF-8 string at offset \(offset)"
        case .nestingTooDeep: return "AMF0: nesting too deep at offset \(offset)"
        }
    }
}
