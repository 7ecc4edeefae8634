/// The server side of the RTMP "simple" handshake as a pure state machine:
/// C0+C1 in → S0+S1+S2 out; C2 in → done. S1 = uptime, four zero bytes (no digest: clients then
/// use the simple handshake), random; S2 = echo of C1.
public struct RTMPHandshake: Sendable {
    public static let version: UInt8 = 3
    public static let packetSize = 1536

    public enum State: Sendable { case waitingForC0C1, waitingForC2, done }

    public enum Step: Sendable, Equatable {
        /// Need more bytes.
        case needMore
        /// Send these bytes (S0 S1 S2).
        case send([UInt8])
        /// Handshake complete; the given number of bytes were consumed in total by the handshake.
        case completed
    }

    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    public private(set) var state: State = .waitingForC0C1
    public var uptimeMs: UInt32 = 0

    public init() {}

    /// Consumes handshake bytes from `bytes` (removing what it used).
    public mutating func step(_ bytes: inout [UInt8]) throws(Failure) -> Step {
        switch state {
        case .waitingForC0C1:
            guard bytes.count >= 1 + Self.packetSize else { return .needMore }
            guard bytes[0] == Self.version else {
                throw Failure(description: "unsupported RTMP version \(bytes[0]) in C0 (encrypted RTMP is not supported)")
            }
            let c1 = Array(bytes[1...Self.packetSize])
            bytes.removeFirst(1 + Self.packetSize)
            state = .waitingForC2
            var out: [UInt8] = [Self.version]
            out.reserveCapacity(1 + 2 * Self.packetSize)
            let t = uptimeMs
            out += [UInt8(t >> 24), UInt8((t >> 16) & 0xFF), UInt8((t >> 8) & 0xFF), UInt8(t & 0xFF), 0, 0, 0, 0]
            var rng = SystemRandomNumberGenerator()
            for _ in 0..<((Self.packetSize - 8) / 8) {
                let r = rng.next() as UInt64
                for s in stride(from: 0, to: 64, by: 8) { out.append(UInt8((r >> UInt64(s)) & 0xFF)) }
            }
            out += c1
            return .send(out)
        case .waitingForC2:
            guard bytes.count >= Self.packetSize else { return .needMore }
            bytes.removeFirst(Self.packetSize)
            state = .done
            return .completed
        case .done:
            return .completed
        }
    }
}
