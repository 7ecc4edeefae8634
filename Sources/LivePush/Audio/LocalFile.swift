#if canImport(Glibc)
import Glibc
#endif

/// File checks without Foundation (the library does not link it).
enum LocalFile {
    /// Whether `path` is a regular file (or a link to one) this process may read.
    static func isReadable(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) != S_IFDIR && access(path, R_OK) == 0
    }
}
