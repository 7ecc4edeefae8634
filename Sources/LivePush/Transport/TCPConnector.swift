#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opens the TCP connection for an RTMP session with a bounded connect time.
///
/// librtmp's own `RTMP_Connect0` resolves and connects with a blocking `connect()` that has
/// no timeout and reports every failure the same way. Connecting here lets LivePush tell a
/// refused port from an unknown host from a timeout, and set *both* socket timeouts: librtmp
/// sets only the receive one, and without a send timeout a server that stops reading blocks
/// the writer forever.
enum TCPConnector {
    struct Timeouts {
        var connect: Duration
        var receive: Duration
        var send: Duration
        var sendBufferBytes: Int? = nil
    }

    /// Returns a connected, blocking socket with `SO_RCVTIMEO`, `SO_SNDTIMEO` and `TCP_NODELAY` set.
    static func connect(host: String, port: Int, timeouts: Timeouts) throws(LivePushError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        // SOCK_STREAM: the name is not visible here once libsrt's module has claimed <sys/socket.h>.
        hints.ai_socktype = 1
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw LivePushError(.hostNotFound, "\(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }

        var lastError = LivePushError(.connectFailed, "\(host):\(port)")
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let info = candidate {
            candidate = info.pointee.ai_next
            do {
                return try connectOne(info.pointee, timeouts: timeouts, label: "\(host):\(port)")
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    private static func connectOne(_ info: addrinfo, timeouts: Timeouts, label: String) throws(LivePushError) -> Int32 {
        let fd = socket(info.ai_family, info.ai_socktype, info.ai_protocol)
        guard fd >= 0 else { throw LivePushError(.connectFailed, "socket(): \(errnoString())") }
        var keep = false
        defer { if !keep { close(fd) } }

        let flags = fcntl(fd, F_GETFL, 0)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        if Glibc.connect(fd, info.ai_addr, info.ai_addrlen) != 0 {
            guard errno == EINPROGRESS else { throw connectError(errno, label) }
            var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&pfd, 1, Int32(clamping: timeouts.connect.milliseconds))
            guard ready > 0 else {
                throw LivePushError(.connectFailed, "\(label): TCP connect timed out after \(timeouts.connect.milliseconds) ms")
            }
            var soError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &length)
            guard soError == 0 else { throw connectError(soError, label) }
        }
        _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)
        setTimeout(fd, SO_RCVTIMEO, timeouts.receive)
        setTimeout(fd, SO_SNDTIMEO, timeouts.send)
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        if let bytes = timeouts.sendBufferBytes {
            var size = Int32(clamping: bytes)
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        keep = true
        return fd
    }

    static func setTimeout(_ fd: Int32, _ option: Int32, _ duration: Duration) {
        let ms = max(1, duration.milliseconds)
        var tv = timeval(tv_sec: Int(ms / 1000), tv_usec: Int((ms % 1000) * 1000))
        setsockopt(fd, SOL_SOCKET, option, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    private static func connectError(_ code: Int32, _ label: String) -> LivePushError {
        if code == ECONNREFUSED { return LivePushError(.connectionRefused, label) }
        // The server's kernel completed the connection and the server then reset it before we
        // saw the connect finish: the same as a reset during the handshake, which follows at once.
        if code == ECONNRESET { return LivePushError(.handshakeFailed, "\(label): the server reset the connection on accept") }
        return LivePushError(.connectFailed, "\(label): \(String(cString: strerror(code)))")
    }

    static func errnoString() -> String { String(cString: strerror(errno)) }
}

extension Duration {
    /// Whole milliseconds, rounded down.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
