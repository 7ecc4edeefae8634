import FoundationEssentials
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `--log-format json`: one JSON object per log line on standard error, for log shippers:
/// `{"time", "level", "label", "message", ...metadata}`. Metadata values are strings (URLs
/// in it are redacted where they are made).
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    /// Keeps lines whole when several threads log at once.
    private static let lock = Mutex(())

    init(label: String) {
        self.label = label
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields: [(String, JSONValue)] = [
            ("time", .string(Date().formatted(.iso8601))), ("level", .string(event.level.rawValue)),
            ("label", .string(label)), ("message", .string("\(event.message)")),
        ]
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        for key in merged.keys.sorted() { fields.append((key, .string("\(merged[key]!)"))) }
        let line = JSONValue.object(fields).encoded + "\n"
        Self.lock.withLock { _ in Console.error(line) }
    }
}
