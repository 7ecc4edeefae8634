import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Raw listening sockets on 127.0.0.1 for test servers that must misbehave on cue.
enum LoopbackSocket {
    /// A socket listening on a free loopback port.
    static func listen(backlog: Int32) throws -> (fd: Int32, port: UInt16) {
        let (fd, port) = try bound(Int32(SOCK_STREAM.rawValue))
        guard Glibc.listen(fd, backlog) == 0 else {
            close(fd)
            throw TimeoutError(what: "listen: \(errno)")
        }
        return (fd, port)
    }

    /// A UDP port of 127.0.0.1 that was free a moment ago (for an SRT peer to bind).
    static func freeUDPPort() throws -> UInt16 {
        let (fd, port) = try bound(Int32(SOCK_DGRAM.rawValue))
        close(fd)
        return port
    }

    /// A socket of `type` bound to a free port of 127.0.0.1.
    private static func bound(_ type: Int32) throws -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, type, 0)
        guard fd >= 0 else { throw TimeoutError(what: "socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            close(fd)
            throw TimeoutError(what: "bind: \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }
}
