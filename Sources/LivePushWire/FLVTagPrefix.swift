/// The few bytes that precede the codec data in an FLV tag body (AVC: 5, AAC: 2), held inline:
/// building them as an array cost an allocation per frame on the send path.
public struct FLVTagPrefix: Sendable, Equatable {
    /// The bytes, first byte in the lowest 8 bits of `low`; bytes 9 to 16 in `high` (an
    /// E-RTMP v2 multitrack frame's header is 10 bytes).
    private var low: UInt64 = 0
    private var high: UInt64 = 0
    public private(set) var count = 0

    /// No prefix (script data, sequence headers built whole).
    public static let none = FLVTagPrefix()

    public init() {}

    /// At most 16 bytes.
    public init(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            precondition(count < 16, "an FLV tag prefix holds at most 16 bytes")
            if count < 8 {
                low |= UInt64(byte) << (8 * UInt64(count))
            } else {
                high |= UInt64(byte) << (8 * UInt64(count - 8))
            }
            count += 1
        }
    }

    /// Lends the bytes to `body` without allocating.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var words = (low.littleEndian, high.littleEndian)
        return try Swift.withUnsafeBytes(of: &words) { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
    }

    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
}

extension FLVBody {
    /// The 5 bytes that precede AVCC data in an AVC NALU packet.
    public static func avcFramePrefix(keyframe: Bool, compositionTimeMs: Int32) -> FLVTagPrefix {
        let cts = UInt32(bitPattern: compositionTimeMs)
        return FLVTagPrefix([keyframe ? 0x17 : 0x27, 0x01, UInt8((cts >> 16) & 0xFF), UInt8((cts >> 8) & 0xFF), UInt8(cts & 0xFF)])
    }

    /// The 2 bytes that precede a raw AAC frame.
    public static func aacFramePrefix(sampleRate: Int, channels: Int) -> FLVTagPrefix {
        FLVTagPrefix([aacFlags(sampleRate: sampleRate, channels: channels), 0x01])
    }
}
