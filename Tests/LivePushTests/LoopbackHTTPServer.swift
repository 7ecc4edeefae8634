import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A scripted HTTP/1.1 server on 127.0.0.1 for the WHIP client's tests: it takes one
/// connection per reply, in order, records each request and answers with the reply's bytes
/// (or, for `.silent`, never answers and holds the connection until `stop()`).
///
/// Bounded: it waits 5 s at most for each connection and each request, and `stop()` ends its
/// thread and closes every socket it opened (call it: the thread keeps the server alive).
final class LoopbackHTTPServer: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible { var description: String }

    struct Request {
        var method: String
        var target: String
        var fields: [(name: String, value: String)]
        var body: String

        func value(of name: String) -> String? {
            fields.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    enum Reply {
        case respond(String)
        case silent
    }

    let port: Int
    private let listenFD: Int32
    private let lock = NSLock()
    private var recorded: [Request] = []
    private var stopped = false
    private let finished = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)

    init(_ replies: [Reply]) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 4) == 0 else {
            close(fd)
            throw Failure(description: "bind/listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listenFD = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in
            serve(replies)
            finished.signal()
        }
        thread.start()
    }

    /// The requests received so far.
    var requests: [Request] { lock.withLock { recorded } }

    /// `http://127.0.0.1:PORT` + `path`.
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Releases a silent connection, waits for the thread (10 s at most) and closes the listener.
    func stop() {
        let first = lock.withLock { () -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        released.signal()
        _ = finished.wait(timeout: .now() + 10)
        close(listenFD)
    }

    private func serve(_ replies: [Reply]) {
        for reply in replies {
            // 5 s at most, in slices, so that stop() need not wait for a client that never comes.
            var ready = false
            for _ in 0..<50 where !ready && !lock.withLock({ stopped }) {
                var pfd = pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)
                ready = poll(&pfd, 1, 100) > 0
            }
            guard ready else { return }
            let connection = accept(listenFD, nil, nil)
            guard connection >= 0 else { return }
            defer { close(connection) }
            var tv = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            guard let request = readRequest(connection) else { return }
            lock.withLock { recorded.append(request) }
            switch reply {
            case .respond(let text):
                let bytes = Array(text.utf8)
                var offset = 0
                while offset < bytes.count {
                    let n = bytes[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    guard n > 0 else { break }
                    offset += n
                }
            case .silent:
                _ = released.wait(timeout: .now() + 10)
            }
        }
    }

    /// The request's head and its Content-Length body, or nil on a timeout or a close.
    private func readRequest(_ fd: Int32) -> Request? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        func more() -> Bool {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return false }
            bytes += buffer.prefix(n)
            return true
        }
        let separator = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            guard more() else { return nil }
            headEnd = bytes.indices.first { bytes[$0...].starts(with: separator) }
        }
        let head = String(decoding: bytes[..<headEnd!], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        let fields = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let length = fields.first { $0.name.lowercased() == "content-length" }.flatMap { Int($0.value) } ?? 0
        let bodyStart = headEnd! + separator.count
        while bytes.count - bodyStart < length {
            guard more() else { return nil }
        }
        return Request(
            method: String(requestLine.first ?? ""), target: requestLine.count > 1 ? String(requestLine[1]) : "",
            fields: fields, body: String(decoding: bytes[bodyStart..<(bodyStart + length)], as: UTF8.self))
    }
}
