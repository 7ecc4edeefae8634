#if canImport(Glibc)
import Glibc
#endif

/// Unbuffered writes to standard output and error; one call per line keeps JSON lines whole.
enum Console {
    static func line(_ text: String) { write(STDOUT_FILENO, text + "\n") }
    static func error(_ text: String) { write(STDERR_FILENO, text) }

    private static func write(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 { return }
            offset += n
        }
    }
}
