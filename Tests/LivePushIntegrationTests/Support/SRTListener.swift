import Foundation
import XCTest

/// `srt-live-transmit` (Debian's srt-tools, the SRT project's own tool) listening on a UDP port
/// of 127.0.0.1 and writing what one caller sends to a file: an SRT peer nobody here wrote. It
/// takes one connection (`-a:no`) and ends when the caller closes it, or at the test's bound.
/// With `acceptsAgain` it listens again once a connection ends (`-a:yes`), writing every
/// caller's stream to the same file, until `stop()` or the bound: a caller's reconnect finds it.
final class SRTListener {
    let port: UInt16
    let outputPath: String
    private let process = Process()
    private let exited = DispatchSemaphore(value: 0)

    static var isAvailable: Bool { ProcessRunner.which("srt-live-transmit") != nil }

    init(in dir: URL, name: String = "received", options: String = "", bound: Int = 90, acceptsAgain: Bool = false) throws {
        try XCTSkipUnless(Self.isAvailable, "srt-live-transmit (srt-tools) not installed")
        port = try Self.freeUDPPort()
        outputPath = dir.appendingPathComponent("\(name).ts").path
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: ProcessRunner.which("srt-live-transmit")!)
        process.arguments = ["-q", acceptsAgain ? "-a:yes" : "-a:no", "-t:\(bound)", "srt://127.0.0.1:\(port)?mode=listener" + (options.isEmpty ? "" : "&" + options),
                             "file://con"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardError = FileHandle.nullDevice
        let exited = self.exited
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        try awaitBound()
    }

    deinit { stop() }

    /// Waits (bounded) until the listener's UDP port is bound, so that a caller's first
    /// handshake is not lost.
    private func awaitBound() throws {
        let hex = String(format: ":%04X", port)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let table = (try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8)) ?? ""
            if table.split(separator: "\n").contains(where: { $0.split(separator: " ").dropFirst().first?.hasSuffix(hex) == true }) { return }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw XCTSkip("srt-live-transmit did not bind UDP port \(port)")
    }

    /// Waits until the listener has ended (its caller closed), at most `timeout`; true if it did.
    @discardableResult
    func awaitExit(timeout: TimeInterval) -> Bool {
        exited.wait(timeout: .now() + timeout) == .success
    }

    func stop() {
        guard process.isRunning else { return }
        process.interrupt()
        if !awaitExit(timeout: 5) { kill(process.processIdentifier, SIGKILL) }
    }

    static func freeUDPPort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw XCTSkip("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw XCTSkip("bind() failed") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return UInt16(bigEndian: address.sin_port)
    }
}
