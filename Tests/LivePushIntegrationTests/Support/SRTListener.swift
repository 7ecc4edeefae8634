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

    /// `latencyMs`: the receiver's latency. SRT's 120 ms default is tight on a loaded 2-core
    /// machine, where libsrt's threads wait for a core: a packet was once dropped as too late in
    /// a full test run. Half a second keeps the tests about what we send, not about the scheduler.
    /// `acceptsAgain`: take a caller's next connection too (a reconnect), not only its first.
    init(in dir: URL, name: String = "received", options: String = "", latencyMs: Int = 500, bound: Int = 90,
         acceptsAgain: Bool = false) throws {
        try XCTSkipUnless(Self.isAvailable, "srt-live-transmit (srt-tools) not installed")
        port = try Self.freeUDPPort()
        outputPath = dir.appendingPathComponent("\(name).ts").path
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: ProcessRunner.which("srt-live-transmit")!)
        process.arguments = ["-q", acceptsAgain ? "-a:yes" : "-a:no", "-t:\(bound)",
                             "srt://127.0.0.1:\(port)?mode=listener&latency=\(latencyMs)" + (options.isEmpty ? "" : "&" + options),
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
        guard Self.awaitUDPPortBound(port) else { throw XCTSkip("srt-live-transmit did not bind UDP port \(port)") }
    }

    /// Waits (at most 10 s) until something on this machine has bound UDP `port`: an SRT
    /// listener that a caller may now reach. False if nothing did.
    static func awaitUDPPortBound(_ port: UInt16) -> Bool {
        let hex = String(format: ":%04X", port)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let table = (try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8)) ?? ""
            if table.split(separator: "\n").contains(where: { $0.split(separator: " ").dropFirst().first?.hasSuffix(hex) == true }) { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return false
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

    static func freeUDPPort() throws -> UInt16 { try LoopbackSocket.freeUDPPort() }
}
