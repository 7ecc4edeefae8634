/// Pairs of hexadecimal digits (either case) as bytes: a colour's `#RRGGBB`, an HLS tag's
/// `0x…` attribute.
enum HexDigits {
    /// `digits` (an even count of ASCII hex digits) as bytes; nil when one is not a hex digit.
    static func bytes(_ digits: [UInt8]) -> [UInt8]? {
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x41...0x46: c - 0x41 + 10
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }
}
