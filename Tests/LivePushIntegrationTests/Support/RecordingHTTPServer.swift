import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A loopback HTTP server that records every request line it is sent and answers each with
/// one fixed response (a `302` to somewhere else, or a `404`): what a hostile caller points the
/// control API at, and what it must never reach. Plain POSIX sockets, one thread per connection.
final class RecordingHTTPServer: @unchecked Sendable {
    let port: UInt16
    private let response: String
    private let listener: Int32
    private let lock = NSLock()
    private var lines: [String] = []
    private var stopped = false

    /// `redirectTo`: every request gets `302 Found` with this `Location`; nil: `404`.
    init(redirectTo location: String? = nil) throws {
        response = location.map { "HTTP/1.1 302 Found\r\nLocation: \($0)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n" }
            ?? "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        (listener, port) = try LoopbackSocket.listen(backlog: 16)
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "RecordingHTTPServer"
        thread.start()
    }

    deinit { stop() }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

    /// The request lines received so far (`GET /x HTTP/1.1`).
    var requests: [String] { lock.withLock { lines } }

    func stop() {
        let wasStopped = lock.withLock { () -> Bool in defer { stopped = true }; return stopped }
        if wasStopped { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return  // closed by stop()
            }
            let thread = Thread { [self] in serve(fd) }
            thread.start()
        }
    }

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        while !received.contains(Data("\r\n\r\n".utf8)) {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received.append(contentsOf: buffer[0..<count])
        }
        let line = String(decoding: received, as: UTF8.self).components(separatedBy: "\r\n").first ?? ""
        lock.withLock { lines.append(line) }
        _ = response.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
    }
}
