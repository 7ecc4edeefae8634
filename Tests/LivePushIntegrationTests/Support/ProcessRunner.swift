import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs an external command to completion with a hard upper bound on its run time.
///
/// stdout and stderr are captured through temporary files (not pipes), so a chatty child can
/// never block on a full pipe buffer. stdin is `/dev/null`. When the timeout expires the child
/// gets SIGTERM, then SIGKILL after `killGrace` seconds, and the result has `timedOut == true`.
///
/// The synchronous `run` blocks the calling thread; from async code use `runAsync`, which
/// blocks a Dispatch thread instead of a cooperative-pool thread.
enum ProcessRunner {
    /// Outcome of one command.
    struct Result: Sendable {
        var executable: String
        var arguments: [String]
        /// Exit status, or the signal number when `terminationReason == .uncaughtSignal`.
        var exitCode: Int32
        var terminatedBySignal: Bool
        var timedOut: Bool
        var stdout: Data
        var stderr: Data
        /// Wall-clock run time in seconds.
        var elapsed: TimeInterval

        var stdoutString: String { String(decoding: stdout, as: UTF8.self) }
        var stderrString: String { String(decoding: stderr, as: UTF8.self) }
        /// True when the command exited normally with status 0 within the timeout.
        var succeeded: Bool { !timedOut && !terminatedBySignal && exitCode == 0 }
        /// One-line-plus-stderr summary for assertion messages.
        var summary: String {
            let status = timedOut ? "timed out" : (terminatedBySignal ? "signal \(exitCode)" : "exit \(exitCode)")
            return "\(([executable] + arguments).joined(separator: " ")) -> \(status) after "
                + String(format: "%.2fs", elapsed) + "\nstderr:\n" + stderrString
        }
    }

    enum Failure: Error, CustomStringConvertible {
        case executableNotFound(String)
        case launchFailed(String, underlying: any Error)

        var description: String {
            switch self {
            case .executableNotFound(let name): return "executable not found in PATH: \(name)"
            case .launchFailed(let path, let error): return "could not launch \(path): \(error)"
            }
        }
    }

    /// Seconds between SIGTERM and SIGKILL when a command overruns its timeout.
    static let killGrace: TimeInterval = 2

    /// Resolves `name` to an executable path: absolute/relative paths containing "/" are taken
    /// as-is, bare names are searched in `$PATH` (plus the usual sbin dirs, where nginx lives).
    static func which(_ name: String) -> String? {
        let fm = FileManager.default
        if name.contains("/") { return fm.isExecutableFile(atPath: name) ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let dirs = path.split(separator: ":").map(String.init) + ["/usr/local/sbin", "/usr/sbin", "/sbin"]
        for dir in dirs where !dir.isEmpty {
            let candidate = (dir as NSString).appendingPathComponent(name)
            if fm.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs `executable` (bare name or path) with `arguments`, waiting at most `timeout` seconds.
    static func run(
        _ executable: String,
        _ arguments: [String],
        timeout: TimeInterval = 60,
        environment: [String: String]? = nil,
        currentDirectory: URL? = nil
    ) throws -> Result {
        guard let path = which(executable) else { throw Failure.executableNotFound(executable) }

        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("processrunner-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("stdout")
        let errURL = scratch.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let outHandle = try FileHandle(forWritingTo: outURL)
        let errHandle = try FileHandle(forWritingTo: errURL)
        defer {
            try? outHandle.close()
            try? errHandle.close()
        }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = outHandle
        process.standardError = errHandle

        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }

        let start = Date()
        do {
            try launch(process)
        } catch {
            throw Failure.launchFailed(path, underlying: error)
        }

        var timedOut = false
        if exited.wait(timeout: .now() + max(0, timeout)) == .timedOut {
            timedOut = true
            process.terminate()  // SIGTERM
            if exited.wait(timeout: .now() + killGrace) == .timedOut {
                kill(process.processIdentifier, SIGKILL)
                // SIGKILL cannot be ignored; this bound only guards against a wedged kernel.
                _ = exited.wait(timeout: .now() + 10)
            }
        }
        let elapsed = Date().timeIntervalSince(start)

        let stdout = (try? Data(contentsOf: outURL)) ?? Data()
        let stderr = (try? Data(contentsOf: errURL)) ?? Data()
        let running = process.isRunning
        return Result(
            executable: path,
            arguments: arguments,
            exitCode: running ? -1 : process.terminationStatus,
            terminatedBySignal: running ? true : process.terminationReason == .uncaughtSignal,
            timedOut: timedOut,
            stdout: stdout,
            stderr: stderr,
            elapsed: elapsed
        )
    }

    /// Starts `process` (like `process.run()`) so that the child begins with NO blocked signals.
    ///
    /// A spawned child inherits the spawning thread's signal mask, and libdispatch worker threads
    /// (where async tests and `DispatchQueue` work run) block SIGTERM, SIGINT, SIGHUP, SIGCHLD...
    /// A child launched from such a thread silently ignores `terminate()`. So the spawn happens
    /// on a short-lived dedicated thread whose mask has been cleared, as on the main thread.
    static func launch(_ process: Process) throws {
        let box = LaunchBox(process)
        let launched = DispatchSemaphore(value: 0)
        let thread = Thread {
            var empty = sigset_t()
            sigemptyset(&empty)
            pthread_sigmask(SIG_SETMASK, &empty, nil)
            do { try box.process.run() } catch { box.error = error }
            launched.signal()
        }
        thread.name = "ProcessRunner.launch"
        thread.start()
        launched.wait()  // posix_spawn returns promptly; no timeout needed
        if let error = box.error { throw error }
    }

    /// Hands a Process to the launch thread and its error back; accessed strictly in sequence
    /// (written before `launched.signal()`, read after `launched.wait()`).
    private final class LaunchBox: @unchecked Sendable {
        let process: Process
        var error: (any Error)?
        init(_ process: Process) { self.process = process }
    }

    /// Async wrapper around `run` that keeps the blocking wait off the Swift concurrency pool.
    static func runAsync(
        _ executable: String,
        _ arguments: [String],
        timeout: TimeInterval = 60,
        environment: [String: String]? = nil,
        currentDirectory: URL? = nil
    ) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Swift.Result {
                    try run(executable, arguments, timeout: timeout,
                            environment: environment, currentDirectory: currentDirectory)
                })
            }
        }
    }
}
