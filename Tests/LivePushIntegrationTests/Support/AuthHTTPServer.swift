import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs `auth_server.py` (next to this file): the HTTP endpoint nginx-rtmp's `on_publish`
/// calls to decide whether a publish with an `auth_key` is allowed.
///
///     let auth = try AuthHTTPServer(privateKey: "k")
///     defer { auth.stop() }
///     let nginx = try NginxRTMPServer(onPublishURL: auth.publishURL)
///
/// The server picks a free loopback port itself and prints it, so there is no port race.
/// `decisions` are its log lines, e.g. `publish app=live name=s -> 403 hash mismatch`.
/// `stop()` is idempotent and also runs from `deinit`.
final class AuthHTTPServer: @unchecked Sendable {
    enum Failure: Error, CustomStringConvertible {
        case unavailable(String)
        case startFailed(String, log: String)

        var description: String {
            switch self {
            case .unavailable(let what): return "auth server unavailable: \(what)"
            case .startFailed(let why, let log): return "auth server did not start: \(why)\n--- log ---\n\(log)"
            }
        }
    }

    static let scriptPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("auth_server.py").path

    static var isAvailable: Bool { ProcessRunner.which("python3") != nil }

    let port: UInt16
    /// `http://127.0.0.1:PORT/publish`, for `on_publish`.
    var publishURL: String { "http://127.0.0.1:\(port)/publish" }

    private let process: Process
    private let exitSignal: DispatchSemaphore
    private let directory: URL
    private let stdoutPath: String
    private let stderrPath: String
    private let lock = NSLock()
    private var stopped = false

    /// - Parameters:
    ///   - timestamp: `expiry` or `issued` (then `validity` seconds apply), as `auth_server.py` takes them.
    ///   - skew: seconds tolerated after the expiry.
    ///   - startupTimeout: upper bound for the server to print its port and accept connections.
    init(privateKey: String, timestamp: String = "expiry", validity: Int = 0, skew: Int = 0,
         startupTimeout: TimeInterval = 10) throws {
        guard let python = ProcessRunner.which("python3") else { throw Failure.unavailable("python3 not in PATH") }
        let directory = try TestMedia.makeTemporaryDirectory(prefix: "auth-server")
        let stdoutPath = directory.appendingPathComponent("stdout").path
        let stderrPath = directory.appendingPathComponent("stderr").path
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        defer {
            try? out.close()
            try? err.close()
        }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-u", Self.scriptPath, "--port", "0", "--timestamp", timestamp,
                             "--validity", String(validity), "--skew", String(skew)]
        var environment = ProcessInfo.processInfo.environment
        environment["AUTH_SERVER_KEY"] = privateKey  // not on the command line
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        let exitSignal = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exitSignal.signal() }
        do {
            try ProcessRunner.launch(process)  // the child must not inherit a blocked SIGTERM
        } catch {
            TestMedia.removeTemporaryDirectory(directory)
            throw Failure.startFailed("could not launch python3: \(error)", log: "")
        }

        // Wait (bounded) for "listening on 127.0.0.1:PORT", then for the port to accept.
        let deadline = Date().addingTimeInterval(startupTimeout)
        var port: UInt16?
        while Date() < deadline, process.isRunning {
            let printed = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
            if let line = printed.split(separator: "\n").first(where: { $0.hasPrefix("listening on 127.0.0.1:") }),
               let p = UInt16(line.split(separator: ":").last ?? ""),
               NginxRTMPServer.acceptsConnections(port: p) {
                port = p
                break
            }
            usleep(20_000)  // readiness poll interval; bounded by `deadline`
        }
        guard let port, process.isRunning else {
            let log = Self.read(stdoutPath) + Self.read(stderrPath)
            Self.terminate(process, exitSignal: exitSignal)
            TestMedia.removeTemporaryDirectory(directory)
            throw Failure.startFailed(process.isRunning ? "not listening after \(startupTimeout)s" : "exited", log: log)
        }
        self.port = port
        self.process = process
        self.exitSignal = exitSignal
        self.directory = directory
        self.stdoutPath = stdoutPath
        self.stderrPath = stderrPath
    }

    deinit {
        stop()
        TestMedia.removeTemporaryDirectory(directory)
    }

    /// One line per `on_publish` call: `publish app=APP name=NAME -> STATUS REASON`.
    var decisions: [String] {
        Self.read(stderrPath).split(separator: "\n").map(String.init).filter { $0.hasPrefix("publish ") }
    }

    /// Everything the server printed.
    var log: String { Self.read(stdoutPath) + Self.read(stderrPath) }

    var isRunning: Bool { process.isRunning }

    /// Terminates the server (SIGTERM, then SIGKILL after 5 s) and waits for it to exit.
    func stop() {
        lock.lock()
        let alreadyStopped = stopped
        stopped = true
        lock.unlock()
        if alreadyStopped { return }
        Self.terminate(process, exitSignal: exitSignal)
    }

    private static func terminate(_ process: Process, exitSignal: DispatchSemaphore) {
        guard process.isRunning else { return }
        process.terminate()
        if exitSignal.wait(timeout: .now() + 5) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            _ = exitSignal.wait(timeout: .now() + 5)
        }
    }

    private static func read(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }
}
