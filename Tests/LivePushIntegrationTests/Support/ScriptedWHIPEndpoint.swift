import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A WHIP endpoint of the test's own on 127.0.0.1, over plain TCP: it answers every request it
/// gets, for as long as it runs, with what `reply` makes of it (the request's number, from 0,
/// and the request), and records every request, so a test can see which carried a token.
///
/// Unlike the unit tests' LoopbackHTTPServer it is not bound to a fixed script: the CLI may
/// connect as often as its retries take it. `stop()` ends its thread and closes every socket.
final class ScriptedWHIPEndpoint: @unchecked Sendable {
    struct Request: Sendable {
        var method: String
        var target: String
        var fields: [(name: String, value: String)]

        func value(of name: String) -> String? {
            fields.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    let port: Int
    private let listenFD: Int32
    private let lock = NSLock()
    private var recorded: [Request] = []
    private var stopped = false
    private let finished = DispatchSemaphore(value: 0)

    init(reply: @escaping @Sendable (Int, Request) -> String) throws {
        let (fd, bound) = try LoopbackSocket.listen(backlog: 8)
        listenFD = fd
        port = Int(bound)
        Thread { [self] in
            serve(reply)
            finished.signal()
        }.start()
    }

    /// `http://127.0.0.1:PORT` + `path`.
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// The requests received so far.
    var requests: [Request] { lock.withLock { recorded } }

    /// Waits (in 20 ms steps, `timeout` at most) until `count` requests have come; whether they did.
    func awaitRequests(_ count: Int, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while requests.count < count, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        return requests.count >= count
    }

    func stop() {
        let first = lock.withLock { () -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        _ = finished.wait(timeout: .now() + 10)
        close(listenFD)
    }

    private func serve(_ reply: (Int, Request) -> String) {
        while !lock.withLock({ stopped }) {
            var pfd = pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 100) > 0 else { continue }
            let connection = accept(listenFD, nil, nil)
            guard connection >= 0 else { continue }
            var tv = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            if let request = readRequest(connection) {
                let number = lock.withLock {
                    recorded.append(request)
                    return recorded.count - 1
                }
                let bytes = Array(reply(number, request).utf8)
                var offset = 0
                while offset < bytes.count {
                    let n = bytes[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    guard n > 0 else { break }
                    offset += n
                }
            }
            close(connection)
        }
    }

    /// The request's head (its body is read and dropped), or nil on a timeout or a close.
    private func readRequest(_ fd: Int32) -> Request? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        func more() -> Bool {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return false }
            bytes += buffer.prefix(n)
            return bytes.count < 1 << 20
        }
        let separator = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            guard more() else { return nil }
            headEnd = bytes.indices.first { bytes[$0...].starts(with: separator) }
        }
        guard let headEnd else { return nil }
        var lines = String(decoding: bytes[..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        let fields = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let length = fields.first { $0.name.lowercased() == "content-length" }.flatMap { Int($0.value) } ?? 0
        while bytes.count - (headEnd + separator.count) < length {
            guard more() else { return nil }
        }
        return Request(method: requestLine.first.map(String.init) ?? "",
                       target: requestLine.count > 1 ? String(requestLine[1]) : "", fields: fields)
    }
}
