/// An 8-bit RGBA colour for an overlay's text or its background; in JSON `"#RRGGBB"` or
/// `"#RRGGBBAA"`.
public struct OverlayColor: Sendable, Equatable {
    /// Red, 0 to 255.
    public var red: UInt8
    /// Green, 0 to 255.
    public var green: UInt8
    /// Blue, 0 to 255.
    public var blue: UInt8
    /// Alpha, 0 (transparent) to 255 (opaque).
    public var alpha: UInt8

    /// Creates a colour.
    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// Opaque white.
    public static let white = OverlayColor(red: 255, green: 255, blue: 255)
    /// Opaque black.
    public static let black = OverlayColor(red: 0, green: 0, blue: 0)

    /// Reads `#RRGGBB` or `#RRGGBBAA` (hex digits, either case); nil for anything else.
    public init?(hex text: String) {
        let digits = Array(text.utf8)
        guard digits.first == UInt8(ascii: "#"), digits.count == 7 || digits.count == 9 else { return nil }
        guard let bytes = HexDigits.bytes(Array(digits.dropFirst())) else { return nil }
        self.init(red: bytes[0], green: bytes[1], blue: bytes[2], alpha: bytes.count == 4 ? bytes[3] : 255)
    }

    /// `#RRGGBBAA`.
    public var hex: String {
        "#" + [red, green, blue, alpha].map { String($0 >> 4, radix: 16) + String($0 & 15, radix: 16) }.joined().uppercased()
    }
}
