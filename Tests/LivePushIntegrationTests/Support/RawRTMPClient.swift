#if canImport(Glibc)
import Glibc
#endif
import LivePushWire

// Compiled into both test targets (Tests/LivePushIntegrationTests/Support has a symlink to it).

/// A minimal blocking RTMP client for tests. Reads time out after 5 s.
final class RawRTMPClient {
    struct Failure: Error, CustomStringConvertible { var description: String }

    private let fd: Int32
    private var encoder = RTMPChunkEncoder()
    private var decoder = RTMPChunkDecoder()
    private var closed = false

    /// `receiveBuffer` sets SO_RCVBUF before connecting (a small one models a peer that reads little).
    init(port: Int, receiveBuffer: Int32? = nil) throws {
        guard let fd = Self.connectTCP(port: port, receiveBuffer: receiveBuffer) else {
            throw Failure(description: "connect failed: errno \(errno)")
        }
        self.fd = fd
        var tv = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// A TCP connection to 127.0.0.1:`port` (a bare socket that sends nothing, for an idle peer), or nil.
    static func connectTCP(port: Int, receiveBuffer: Int32? = nil) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            Glibc.close(fd)
            return nil
        }
        return fd
    }

    deinit { close() }

    func close() {
        if !closed { closed = true; Glibc.close(fd) }
    }

    func sendAll(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(description: "send failed: errno \(errno)") }
            offset += n
        }
    }

    /// Some bytes; empty at EOF; throws on timeout.
    func receiveSome() throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 { throw Failure(description: "receive failed/timed out: errno \(errno)") }
        return Array(buffer.prefix(n))
    }

    func receiveExactly(_ count: Int) throws -> [UInt8] {
        var out: [UInt8] = []
        while out.count < count {
            var buffer = [UInt8](repeating: 0, count: count - out.count)
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw Failure(description: "receive failed: \(n) errno \(errno)") }
            out += buffer.prefix(n)
        }
        return out
    }

    func handshake() throws {
        let c1 = (0..<1536).map { _ in UInt8.random(in: 0...255) }
        try sendAll([3] + c1)
        let s = try receiveExactly(1 + 1536 * 2)
        guard s[0] == 3 else { throw Failure(description: "S0 version \(s[0])") }
        guard Array(s[1537...]) == c1 else { throw Failure(description: "S2 is not an echo of C1") }
        try sendAll(Array(s[1...1536]))
    }

    func send(_ message: RTMPMessage) throws {
        try sendAll(encoder.encode(message))
    }

    func readMessage() throws -> RTMPMessage {
        while true {
            if let m = try decoder.nextMessage() { return m }
            let bytes = try receiveSome()
            if bytes.isEmpty { throw Failure(description: "connection closed") }
            decoder.append(bytes)
        }
    }

    /// Reads messages until one matches (at most 1000 messages).
    func readUntil(_ predicate: (RTMPMessage) -> Bool) throws -> RTMPMessage {
        for _ in 0..<1000 {
            let m = try readMessage()
            if predicate(m) { return m }
        }
        throw Failure(description: "no matching message")
    }

    /// True when the peer closes the connection (within the read timeout).
    func readUntilClosed() throws -> Bool {
        for _ in 0..<1000 {
            do {
                if try receiveSome().isEmpty { return true }
            } catch where errno == ECONNRESET {
                return true  // closed with our bytes unread
            }
        }
        return false
    }
}
