#if canImport(Glibc)
import Glibc
#endif

/// File access without Foundation: the library and the CLI link only FoundationEssentials,
/// which has no `FileHandle` (Foundation and its ICU cost every process ~6 MiB and its start-up).
enum LocalFile {
    /// Whether `path` is a regular file (or a link to one) this process may read.
    static func isReadable(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) != S_IFDIR && access(path, R_OK) == 0
    }

    /// The first `limit` bytes of `path` (all of it when shorter); nil when it cannot be read.
    static func read(_ path: String, upTo limit: Int) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: limit)
        var count = 0
        while count < limit {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + count, limit - count) }
            if n == 0 { break }
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            count += n
        }
        bytes.removeSubrange(count...)
        return bytes
    }
}
