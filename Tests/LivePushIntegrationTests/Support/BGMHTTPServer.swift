import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A loopback HTTP server for BGM tests: serves files from a directory, and stalls on cue.
///
/// - `GET /NAME` sends the file with a Content-Length;
/// - `GET /stall/NAME` sends the headers and the first `stallAfterBytes` bytes, then nothing
///   (the connection stays open until `stop()`);
/// - `GET /silent/NAME` accepts the request and never answers.
///
/// It records when it stopped sending on a stalling or silent request (``stoppedSending(_:)``):
/// a download timeout counts from there.
///
/// Plain POSIX sockets and one thread per connection; `stop()` closes every socket and is
/// idempotent (also run from `deinit`).
final class BGMHTTPServer: @unchecked Sendable {
    let port: UInt16
    let directory: URL
    let stallAfterBytes: Int
    private let listener: Int32
    private let lock = NSLock()
    private var clients: Set<Int32> = []
    private var stopped = false
    private var stalls: [String: ContinuousClock.Instant] = [:]

    init(directory: URL, stallAfterBytes: Int = 48_000) throws {
        self.directory = directory
        self.stallAfterBytes = stallAfterBytes
        (listener, port) = try LoopbackSocket.listen(backlog: 16)
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "BGMHTTPServer"
        thread.start()
    }

    deinit { stop() }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

    /// When the last request for `path` (`stall/NAME`, `silent/NAME`) got the last byte it will
    /// get: nil while none did.
    func stoppedSending(_ path: String) -> ContinuousClock.Instant? {
        lock.lock()
        defer { lock.unlock() }
        return stalls[path]
    }

    private func recordStall(_ path: String) {
        lock.lock()
        stalls[path] = .now
        lock.unlock()
    }

    func stop() {
        lock.lock()
        let wasStopped = stopped
        stopped = true
        let open = clients
        clients = []
        lock.unlock()
        if wasStopped { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for fd in open {
            shutdown(fd, Int32(SHUT_RDWR))
            close(fd)
        }
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return  // closed by stop()
            }
            lock.lock()
            if stopped {
                lock.unlock()
                close(fd)
                return
            }
            clients.insert(fd)
            lock.unlock()
            let thread = Thread { [self] in serve(fd) }
            thread.start()
        }
    }

    private func serve(_ fd: Int32) {
        var request = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !request.containsHeaderEnd {
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { return finish(fd) }
            request += buffer[0..<n]
        }
        let line = String(decoding: request.prefix { $0 != 13 }, as: UTF8.self).split(separator: " ")
        guard line.count >= 2 else { return finish(fd) }
        let requested = String(line[1].dropFirst())
        var path = requested
        var mode = "serve"
        for prefix in ["stall/", "silent/"] where path.hasPrefix(prefix) {
            mode = String(prefix.dropLast())
            path.removeFirst(prefix.count)
        }
        if mode == "silent" {
            recordStall(requested)
            return  // hold the connection; stop() closes it
        }
        guard let body = FileManager.default.contents(atPath: directory.appendingPathComponent(path).path) else {
            send(fd, Array("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
            return finish(fd)
        }
        send(fd, Array(("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: \(body.count)\r\n"
                        + "Connection: close\r\n\r\n").utf8))
        if mode == "stall" {
            send(fd, Array(body.prefix(stallAfterBytes)))
            recordStall(requested)
            return  // never more; stop() closes it
        }
        send(fd, Array(body))
        finish(fd)
    }

    private func send(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            offset += n
        }
    }

    private func finish(_ fd: Int32) {
        lock.lock()
        let owned = clients.remove(fd) != nil
        lock.unlock()
        if owned {
            shutdown(fd, Int32(SHUT_WR))
            close(fd)
        }
    }
}

private extension Array where Element == UInt8 {
    var containsHeaderEnd: Bool {
        count >= 4 && (0...(count - 4)).contains { self[$0] == 13 && self[$0 + 1] == 10 && self[$0 + 2] == 13 && self[$0 + 3] == 10 }
    }
}
