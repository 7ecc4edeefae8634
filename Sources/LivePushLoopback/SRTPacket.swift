/// What the SRT relay needs to know of a datagram: the 16-byte SRT header (data or control,
/// the control type) and, for a handshake, its type. Nothing else is parsed: the relay forwards
/// bytes and never rewrites them.
///
/// Header (SRT RFC draft, section 3): bit 0 of the first 32-bit word is the F flag, 1 for a
/// control packet; a control packet's next 15 bits are its type (0x0000 handshake, 0x0001
/// keep-alive, 0x0002 ACK, 0x0003 NAK, 0x0005 shutdown, 0x0006 ACKACK...). A handshake's type is
/// the 32-bit word at byte 36 (16 bytes of header, then version, encryption and extension
/// fields, initial sequence number, MTU, flow window): 1 induction, 0xFFFFFFFF conclusion,
/// 0xFFFFFFFE agreement, 0 wave-a-hand (rendezvous), 1000 and up a rejection.
struct SRTPacket: Equatable {
    enum Kind: Equatable {
        case data
        case handshake(type: UInt32?)
        case shutdown
        case control(type: UInt16)
        /// Shorter than an SRT header.
        case runt
    }

    static let headerSize = 16
    static let handshakeInduction: UInt32 = 1
    static let handshakeConclusion: UInt32 = 0xFFFF_FFFF

    let kind: Kind
    /// A handshake's SRT socket id (the sender's), the 32-bit word at byte 40: a new id from a
    /// known address is a new connection.
    let handshakeSocketID: UInt32?

    init<Bytes: Collection<UInt8>>(_ bytes: Bytes) {
        (kind, handshakeSocketID) = Self.classify(bytes)
    }

    private static func classify<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> (Kind, UInt32?) {
        guard bytes.count >= headerSize, let first = bytes.first else { return (.runt, nil) }
        guard first & 0x80 != 0 else { return (.data, nil) }
        let second = bytes[bytes.index(after: bytes.startIndex)]
        let type = UInt16(first & 0x7F) << 8 | UInt16(second)
        switch type {
        case 0x0000: return (.handshake(type: word(bytes, at: 36)), word(bytes, at: 40))
        case 0x0005: return (.shutdown, nil)
        default: return (.control(type: type), nil)
        }
    }

    /// The big-endian 32-bit word at `offset`, nil past the end.
    private static func word<Bytes: Collection<UInt8>>(_ bytes: Bytes, at offset: Int) -> UInt32? {
        guard bytes.count >= offset + 4 else { return nil }
        return bytes.dropFirst(offset).prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    var isData: Bool { kind == .data }

    var isHandshake: Bool {
        if case .handshake = kind { true } else { false }
    }

    /// The first handshake of a caller's connect (a new connection from that address).
    var isInduction: Bool { kind == .handshake(type: Self.handshakeInduction) }
}
