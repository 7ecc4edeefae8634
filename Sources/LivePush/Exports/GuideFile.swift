#if canImport(Glibc)
import Glibc
#endif

/// Writes the programme guide file atomically: a temporary file beside it, flushed to disk,
/// then renamed over it, so a platform fetching the guide never reads half of one.
enum GuideFile {
    /// Whether a guide can be written at `path` (its temporary file can be made beside it):
    /// checked before a channel starts, so a wrong path is refused before anything is pushed.
    static func checkWritable(_ path: String) throws(LivePushError) {
        let temporary = "\(path).\(getpid()).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw LivePushError(.scheduleExportFailed, "the guide \(path) cannot be written: \(String(cString: strerror(errno)))")
        }
        close(descriptor)
        unlink(temporary)
    }

    /// Writes `text` to `path`; `scheduleExportFailed` when it cannot.
    static func write(_ text: String, to path: String) throws(LivePushError) {
        let temporary = "\(path).\(getpid()).tmp"
        func failure(_ what: String) -> LivePushError {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            return LivePushError(.scheduleExportFailed, "the guide \(path) cannot be \(what): \(reason)")
        }
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure("written") }
        let written = AsRunJournal.writeAll(descriptor, text) && fsync(descriptor) == 0
        close(descriptor)
        guard written else { throw failure("written") }
        guard rename(temporary, path) == 0 else { throw failure("replaced") }
    }
}
