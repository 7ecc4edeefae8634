/// A key/value pair of an AMF0 object or ECMA array. Order is preserved on the wire.
public struct AMF0Property: Sendable, Equatable {
    public var key: String
    public var value: AMF0Value

    public init(_ key: String, _ value: AMF0Value) {
        self.key = key
        self.value = value
    }
}

extension Array where Element == AMF0Property {
    /// The value of the first property named `key`.
    public subscript(key key: String) -> AMF0Value? {
        first(where: { $0.key == key })?.value
    }
}
