import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The as-run log's writer: each record as one JSON line, appended to its file with one
/// `write(2)` as it happens (nothing is buffered in the process, so a crash loses at most the
/// line being written), and the last `kept` lines kept for `GET /as-run`.
package final class AsRunJournal: Sendable {
    /// Lines kept in memory for the API by `livepush playout` (about 300 bytes each).
    package static let keptLines = 1000
    /// Lines kept per channel by `livepush channels`: a thousand channels keep about 30 MB.
    package static let keptLinesPerChannel = 100

    private struct State {
        var descriptor: Int32?
        var recent: [String] = []
        /// Where the next line goes in `recent` once it is full (a ring).
        var next = 0
        var failed = false
    }

    private let state: Mutex<State>
    /// The file, if any.
    package let path: String?
    /// How many lines ``lines`` keeps.
    package let kept: Int

    /// Appends to `path` (created if missing; nil: memory only). Throws `scheduleExportFailed`
    /// when it cannot be opened.
    package init(path: String?, keeping kept: Int = AsRunJournal.keptLines) throws(LivePushError) {
        self.path = path
        self.kept = max(1, kept)
        var descriptor: Int32?
        if let path {
            let opened = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard opened >= 0 else {
                throw LivePushError(.scheduleExportFailed, "the as-run log \(path) cannot be opened: \(String(cString: strerror(errno)))")
            }
            descriptor = opened
        }
        state = Mutex(State(descriptor: descriptor))
    }

    /// Lines in memory only.
    package init(keeping kept: Int) {
        path = nil
        self.kept = max(1, kept)
        state = Mutex(State(descriptor: nil))
    }

    deinit {
        state.withLock { if let descriptor = $0.descriptor { close(descriptor) } }
    }

    /// Writes `record`'s line. Returns the error the first time the file cannot be written
    /// (the line is still kept in memory; later failures are not repeated).
    @discardableResult
    package func append(_ record: AsRunRecord) -> LivePushError? {
        let line = record.jsonLine
        return state.withLock { state -> LivePushError? in
            if state.recent.count < kept {
                state.recent.append(line)
            } else {
                state.recent[state.next] = line
                state.next = (state.next + 1) % kept
            }
            guard let descriptor = state.descriptor, !Self.writeAll(descriptor, line + "\n") else { return nil }
            defer { state.failed = true }
            return state.failed ? nil : LivePushError(.scheduleExportFailed, "the as-run log \(path ?? "") cannot be written: \(String(cString: strerror(errno)))")
        }
    }

    /// The kept lines, oldest first.
    package var lines: [String] {
        state.withLock { Array($0.recent[$0.next...] + $0.recent[..<$0.next]) }
    }

    /// One `write(2)` of the whole line (more only when the kernel takes part of it).
    static func writeAll(_ descriptor: Int32, _ text: String) -> Bool {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            bytes = bytes.dropFirst(n)
        }
        return true
    }
}
