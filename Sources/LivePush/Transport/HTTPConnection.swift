#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One HTTP/1.1 request and its response on a connection of its own (`Connection: close`),
/// over TCP or TLS, blocking, within a deadline.
///
/// The WHIP client sends three requests in a session's life, minutes apart: keeping a
/// connection open between them would buy nothing and need a pool. Every read waits at most
/// until the deadline, so a server that accepts and never answers, or answers a byte at a
/// time, costs the caller its timeout and no more.
final class HTTPConnection {
    private let fd: Int32
    private var tls: TLSConnector.Connection?
    private let label: String
    private var closed = false

    /// Connects to `url`'s host and, for https://, runs the TLS handshake and checks the server.
    init(to url: PushURL, tls options: TLSOptions, deadline: ContinuousClock.Instant) throws(LivePushError) {
        _ = Self.ignoreSIGPIPEOnce
        label = "\(url.host):\(url.port)"
        let remaining = try Self.remaining(until: deadline, label: label)
        fd = try TCPConnector.connect(
            host: url.host, port: url.port, timeouts: .init(connect: remaining, receive: remaining, send: remaining))
        guard url.scheme == .https else { return }
        do {
            tls = try TLSConnector.start(
                fd: fd, host: url.host, port: url.port, options: options, timeout: Self.remaining(until: deadline, label: label))
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    deinit { close() }

    func close() {
        guard !closed else { return }
        closed = true
        if let tls { GnuTLS.close(tls.session) }
        tls = nil
        Glibc.close(fd)
    }

    /// Sends `request` and reads the response, until the deadline at most; a body longer than
    /// `maxBodyBytes` is refused.
    func exchange(_ request: [UInt8], deadline: ContinuousClock.Instant,
                  maxBodyBytes: Int = HTTPResponseParser.maxBodyBytes) throws(LivePushError) -> HTTPMessage {
        try send(request, deadline: deadline)
        var parser = HTTPResponseParser(maxBodyBytes: maxBodyBytes)
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        do {
            while true {
                let n = try receive(into: &buffer, deadline: deadline)
                if n == 0 { return try parser.finish() }
                if let response = try parser.feed(buffer[..<n]) { return response }
            }
        } catch let failure as HTTPResponseParser.Failure {
            throw LivePushError(.whipServerError, "\(label): \(Self.describe(failure, bodyLimit: maxBodyBytes))")
        } catch let error as LivePushError {
            throw error
        } catch {
            throw LivePushError(.whipServerError, "\(label): \(error)")
        }
    }

    private func send(_ bytes: [UInt8], deadline: ContinuousClock.Instant) throws(LivePushError) {
        TCPConnector.setTimeout(fd, SO_SNDTIMEO, try Self.remaining(until: deadline, label: label))
        if let tls {
            if let failure = GnuTLS.send(bytes, on: tls.session) {
                throw failure.timedOut ? timedOut(deadline) : LivePushError(.connectionLost, "\(label): \(failure.reason)")
            }
            return
        }
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                offset += n
            } else if n < 0, errno == EINTR {
                continue
            } else if n < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                throw timedOut(deadline)
            } else {
                throw LivePushError(.connectionLost, "\(label): \(TCPConnector.errnoString())")
            }
        }
    }

    /// Bytes read into `buffer` (0 at the end of the stream).
    private func receive(into buffer: inout [UInt8], deadline: ContinuousClock.Instant) throws(LivePushError) -> Int {
        while true {
            // The socket's receive timeout is what is left of the deadline, so that many small
            // reads cannot add up beyond it.
            TCPConnector.setTimeout(fd, SO_RCVTIMEO, try Self.remaining(until: deadline, label: label))
            if let tls {
                let result = buffer.withUnsafeMutableBytes { GnuTLS.receive(from: tls.session, into: $0, uncleanCloseEnds: true) }
                switch result {
                case .bytes(let n): return n
                case .closed: return 0
                // The socket is blocking: "would block" means its receive timeout struck.
                case .wouldBlock: if ContinuousClock.now >= deadline { throw timedOut(deadline) }
                case .failed(let reason):
                    throw LivePushError(.connectionLost, "\(label): \(reason)")
                }
                continue
            }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n >= 0 { return n }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK {
                if ContinuousClock.now >= deadline { throw timedOut(deadline) }
                continue
            }
            throw LivePushError(.connectionLost, "\(label): \(TCPConnector.errnoString())")
        }
    }

    private func timedOut(_ deadline: ContinuousClock.Instant) -> LivePushError {
        LivePushError(.whipTimeout, "\(label): no complete answer in time")
    }

    /// What is left until `deadline`; `whipTimeout` when nothing is.
    private static func remaining(until deadline: ContinuousClock.Instant, label: String) throws(LivePushError) -> Duration {
        let left = deadline - ContinuousClock.now
        guard left > .milliseconds(1) else { throw LivePushError(.whipTimeout, "\(label): no complete answer in time") }
        return left
    }

    private static func describe(_ failure: HTTPResponseParser.Failure, bodyLimit: Int) -> String {
        switch failure {
        case .malformed(let why): "malformed HTTP response: \(why)"
        case .headersTooLarge: "the response's header exceeds \(HTTPResponseParser.maxHeaderBytes / 1024) KiB"
        case .bodyTooLarge: "the response's body exceeds \(bodyLimit / 1024) KiB"
        case .truncated: "the server closed the connection before its response was complete"
        }
    }

    /// Writing to a connection the server has reset raises SIGPIPE; GnuTLS's writes do not
    /// pass MSG_NOSIGNAL. (RTMPSession ignores it too; either may run first.)
    private static let ignoreSIGPIPEOnce: Void = { signal(SIGPIPE, SIG_IGN) }()
}
