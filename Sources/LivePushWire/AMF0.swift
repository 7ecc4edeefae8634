/// AMF0 encoder and decoder.
public enum AMF0 {
    enum Marker {
        static let number: UInt8 = 0x00
        static let boolean: UInt8 = 0x01
        static let string: UInt8 = 0x02
        static let object: UInt8 = 0x03
        static let movieclip: UInt8 = 0x04
        static let null: UInt8 = 0x05
        static let undefined: UInt8 = 0x06
        static let reference: UInt8 = 0x07
        static let ecmaArray: UInt8 = 0x08
        static let objectEnd: UInt8 = 0x09
        static let strictArray: UInt8 = 0x0A
        static let date: UInt8 = 0x0B
        static let longString: UInt8 = 0x0C
        static let unsupported: UInt8 = 0x0D
        static let recordset: UInt8 = 0x0E
        static let xmlDocument: UInt8 = 0x0F
        static let typedObject: UInt8 = 0x10
        static let avmplus: UInt8 = 0x11
    }

    static let maxDepth = 64

    // MARK: Encoding

    /// Encodes values one after another (e.g. a command message body).
    public static func encode(_ values: [AMF0Value]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for v in values { encode(v, into: &out) }
        return out
    }

    /// Appends one encoded value to `into`.
    public static func encode(_ value: AMF0Value, into out: inout [UInt8]) {
        switch value {
        case .number(let n):
            out.append(Marker.number)
            appendDouble(n, into: &out)
        case .boolean(let b):
            out.append(Marker.boolean)
            out.append(b ? 1 : 0)
        case .string(let s):
            let utf8 = Array(s.utf8)
            if utf8.count > 0xFFFF {
                out.append(Marker.longString)
                appendUInt32(UInt32(utf8.count), into: &out)
            } else {
                out.append(Marker.string)
                appendUInt16(UInt16(utf8.count), into: &out)
            }
            out.append(contentsOf: utf8)
        case .object(let props):
            out.append(Marker.object)
            appendProperties(props, into: &out)
        case .null:
            out.append(Marker.null)
        case .undefined:
            out.append(Marker.undefined)
        case .ecmaArray(let props):
            out.append(Marker.ecmaArray)
            appendUInt32(UInt32(truncatingIfNeeded: props.count), into: &out)
            appendProperties(props, into: &out)
        case .strictArray(let values):
            out.append(Marker.strictArray)
            appendUInt32(UInt32(truncatingIfNeeded: values.count), into: &out)
            for v in values { encode(v, into: &out) }
        case .date(let ms):
            out.append(Marker.date)
            appendDouble(ms, into: &out)
            out.append(0); out.append(0)
        }
    }

    static func appendProperties(_ props: [AMF0Property], into out: inout [UInt8]) {
        for p in props {
            // Keys are UTF-8 "short strings" without marker; clamp absurdly long keys.
            var key = Array(p.key.utf8)
            if key.count > 0xFFFF { key = Array(key.prefix(0xFFFF)) }
            appendUInt16(UInt16(key.count), into: &out)
            out.append(contentsOf: key)
            encode(p.value, into: &out)
        }
        out.append(0); out.append(0); out.append(Marker.objectEnd)
    }

    @inline(__always) static func appendUInt16(_ v: UInt16, into out: inout [UInt8]) {
        out.append(UInt8(v >> 8)); out.append(UInt8(v & 0xFF))
    }

    @inline(__always) static func appendUInt32(_ v: UInt32, into out: inout [UInt8]) {
        out.append(UInt8(v >> 24)); out.append(UInt8((v >> 16) & 0xFF))
        out.append(UInt8((v >> 8) & 0xFF)); out.append(UInt8(v & 0xFF))
    }

    @inline(__always) static func appendDouble(_ d: Double, into out: inout [UInt8]) {
        let bits = d.bitPattern
        for shift in stride(from: 56, through: 0, by: -8) {
            out.append(UInt8((bits >> UInt64(shift)) & 0xFF))
        }
    }

    // MARK: Decoding

    /// Decodes all values in `bytes` (e.g. a whole command or data message body).
    public static func decode(_ bytes: some Collection<UInt8>) throws(AMF0Error) -> [AMF0Value] {
        var reader = Reader(Array(bytes))
        var values: [AMF0Value] = []
        while !reader.isAtEnd {
            values.append(try reader.readValue(depth: 0))
        }
        return values
    }

    /// Decodes one value starting at `offset`, advancing `offset` past it.
    public static func decodeValue(_ bytes: [UInt8], offset: inout Int) throws(AMF0Error) -> AMF0Value {
        var reader = Reader(bytes)
        reader.position = offset
        let v = try reader.readValue(depth: 0)
        offset = reader.position
        return v
    }

    struct Reader {
        let bytes: [UInt8]
        var position = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var isAtEnd: Bool { position >= bytes.count }

        mutating func need(_ n: Int) throws(AMF0Error) {
            if bytes.count - position < n { throw AMF0Error(.truncated, offset: position) }
        }

        mutating func u8() throws(AMF0Error) -> UInt8 {
            try need(1)
            defer { position += 1 }
            return bytes[position]
        }

        mutating func u16() throws(AMF0Error) -> Int {
            try need(2)
            defer { position += 2 }
            return Int(bytes[position]) << 8 | Int(bytes[position + 1])
        }

        mutating func u32() throws(AMF0Error) -> Int {
            try need(4)
            defer { position += 4 }
            return Int(bytes[position]) << 24 | Int(bytes[position + 1]) << 16
                | Int(bytes[position + 2]) << 8 | Int(bytes[position + 3])
        }

        mutating func double() throws(AMF0Error) -> Double {
            try need(8)
            var bits: UInt64 = 0
            for i in 0..<8 { bits = bits << 8 | UInt64(bytes[position + i]) }
            position += 8
            return Double(bitPattern: bits)
        }

        mutating func utf8(count: Int) throws(AMF0Error) -> String {
            try need(count)
            let start = position
            let slice = bytes[position..<(position + count)]
            position += count
            guard let s = String(validating: slice, as: UTF8.self) else {
                throw AMF0Error(.invalidUTF8, offset: start)
            }
            return s
        }

        mutating func readProperties(depth: Int) throws(AMF0Error) -> [AMF0Property] {
            var props: [AMF0Property] = []
            while true {
                let keyLength = try u16()
                if keyLength == 0 {
                    // Empty key: normally followed by the object-end marker.
                    if !isAtEnd && bytes[position] == Marker.objectEnd {
                        position += 1
                        return props
                    }
                    if isAtEnd {
                        // Some encoders omit the end marker at the very end of a message.
                        return props
                    }
                }
                let key = try utf8(count: keyLength)
                let value = try readValue(depth: depth + 1)
                props.append(AMF0Property(key, value))
            }
        }

        mutating func readValue(depth: Int) throws(AMF0Error) -> AMF0Value {
            if depth > AMF0.maxDepth { throw AMF0Error(.nestingTooDeep, offset: position) }
            let markerOffset = position
            let marker = try u8()
            switch marker {
            case Marker.number: return .number(try double())
            case Marker.boolean: return .boolean(try u8() != 0)
            case Marker.string: return .string(try utf8(count: try u16()))
            case Marker.longString, Marker.xmlDocument: return .string(try utf8(count: try u32()))
            case Marker.object: return .object(try readProperties(depth: depth))
            case Marker.typedObject:
                _ = try utf8(count: try u16())  // class name
                return .object(try readProperties(depth: depth))
            case Marker.null: return .null
            case Marker.undefined, Marker.unsupported: return .undefined
            case Marker.ecmaArray:
                _ = try u32()  // count is advisory; read until the end marker
                return .ecmaArray(try readProperties(depth: depth))
            case Marker.strictArray:
                let count = try u32()
                // Every value takes at least one byte: guard against absurd counts.
                try need(count)
                var values: [AMF0Value] = []
                // Nested arrays each passing `need` could still reserve many times the input
                // (24 bytes per value, per level): reserve little and let the array grow with
                // the values that actually decode.
                values.reserveCapacity(min(count, 64))
                for _ in 0..<count { values.append(try readValue(depth: depth + 1)) }
                return .strictArray(values)
            case Marker.date:
                let ms = try double()
                try need(2)
                position += 2
                return .date(ms)
            case Marker.movieclip, Marker.reference, Marker.recordset, Marker.avmplus, Marker.objectEnd:
                throw AMF0Error(.unsupportedMarker(marker), offset: markerOffset)
            default:
                throw AMF0Error(.unknownMarker(marker), offset: markerOffset)
            }
        }
    }
}
