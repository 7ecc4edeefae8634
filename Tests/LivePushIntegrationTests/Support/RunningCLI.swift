import Foundation
import XCTest

/// A `livepush` process the test talks to while it runs: its stdout arrives line by line.
final class RunningCLI: @unchecked Sendable {
    private let process = Process()
    private let lock = NSLock()
    private var lines: [String] = []
    private var partial = Data()

    /// `environment`: variables added to the test's own (a secret that must not be an argument).
    convenience init(_ arguments: [String], environment: [String: String] = [:]) throws {
        try self.init(executable: try XCTUnwrap(LivePushCLI.binary, "livepush executable not found next to the test bundle"), arguments,
                      environment: environment)
    }

    /// Any program (a test peer), run the same way.
    init(executable binary: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        process.standardInput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: stderrPath) ?? FileHandle.nullDevice
        let pipe = Pipe()
        process.standardOutput = pipe
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in self?.received(handle.availableData) }
        try process.run()
    }

    /// Where its standard error (logs) goes; removed with it.
    let stderrPath = FileManager.default.temporaryDirectory.appendingPathComponent("livepush-cli-\(UUID().uuidString).stderr").path

    /// What it wrote on standard error so far.
    var standardError: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    deinit {
        if process.isRunning { process.terminate() }
        try? FileManager.default.removeItem(atPath: stderrPath)
    }

    private func received(_ data: Data) {
        lock.lock()
        defer { lock.unlock() }
        partial.append(data)
        while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: partial[partial.startIndex..<newline], as: UTF8.self))
            partial = Data(partial[(newline + 1)...])
        }
    }

    /// The first line (already printed or to come) that matches, or nil after `timeout`.
    /// (Lines are checked as they come in, every 20 ms; the timeout is only an upper bound.)
    func awaitLine(timeout: Duration = .seconds(20), _ predicate: (String) -> Bool) async -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = output.first(where: predicate) { return line }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    /// The first `--json` event (already printed or to come) named `name` whose fields match,
    /// or nil after `timeout`: how a test awaits a state (so many frames sent, an output up)
    /// instead of assuming the pace a busy machine may not keep.
    func awaitEvent(_ name: String, timeout: Duration = .seconds(20),
                    where predicate: ([String: Any]) -> Bool = { _ in true }) async -> [String: Any]? {
        var found: [String: Any]?
        _ = await awaitLine(timeout: timeout) { line in
            guard line.contains("\"\(name)\""),
                  let event = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  event["event"] as? String == name, predicate(event) else { return false }
            found = event
            return true
        }
        return found
    }

    /// The figures (`stats`) of the last `stopped` event a `--json` push printed, nil before it.
    var stoppedStats: [String: Any]? {
        let line = output.last { $0.contains("\"stopped\"") }
        let event = line.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        return event?["stats"] as? [String: Any]
    }

    /// The first `stats` event whose push has sent at least `frames` pictures (`--json`, with a
    /// short `--stats-interval`), or nil after `timeout`.
    func awaitVideoFramesSent(_ frames: Int, timeout: Duration = .seconds(60)) async -> [String: Any]? {
        await awaitEvent("stats", timeout: timeout) { event in
            ((event["stats"] as? [String: Any])?["videoFramesSent"] as? Int ?? 0) >= frames
        }
    }

    var processIdentifier: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    /// SIGINT, as Ctrl-C or an orchestrator's stop would send.
    func interrupt() { process.interrupt() }

    /// Every line so far.
    var output: [String] { lock.lock(); defer { lock.unlock() }; return lines }

    /// Waits for the process to end (bounded); its exit status, nil on timeout (then it is killed).
    func awaitExit(timeout: Duration = .seconds(60)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
        guard !process.isRunning else {
            process.terminate()
            return nil
        }
        return process.terminationStatus
    }
}
