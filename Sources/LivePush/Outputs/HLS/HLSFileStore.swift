#if canImport(Glibc)
import Glibc
#endif

/// A `file://` HLS output's directory. A put writes a temporary file beside its target
/// (`.index.m3u8.tmp`) and renames it over the target, which POSIX makes atomic: a player or
/// an HTTP server reading the directory sees the old playlist or the new one, never half of
/// one. The directory must exist (as for FFmpeg's hls muxer); nothing outside it is written.
struct HLSFileStore: HLSStore {
    /// The directory, as the URL's path gives it.
    let directory: String

    func check() throws(LivePushError) {
        var info = stat()
        guard stat(directory, &info) == 0 else { throw failure(directory) }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw LivePushError(.hlsWriteFailed, "\(directory): not a directory")
        }
        guard access(directory, W_OK | X_OK) == 0 else { throw failure(directory) }
    }

    func perform(_ write: HLSWrite) throws(LivePushError) {
        switch write {
        case .put(let name, let bytes): try put(name, bytes)
        case .delete(let name):
            let path = self.path(name)
            guard unlink(path) == 0 || errno == ENOENT else { throw failure(path) }
        }
    }

    private func put(_ name: String, _ bytes: [UInt8]) throws(LivePushError) {
        let target = path(name)
        let temporary = path(".\(name).tmp")
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { throw failure(temporary) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let error = failure(temporary)
                _ = close(fd)
                _ = unlink(temporary)
                throw error
            }
            offset += n
        }
        guard close(fd) == 0 else {
            let error = failure(temporary)
            _ = unlink(temporary)
            throw error
        }
        guard rename(temporary, target) == 0 else {
            let error = failure(target)
            _ = unlink(temporary)
            throw error
        }
    }

    private func path(_ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : "\(directory)/\(name)"
    }

    private func failure(_ path: String) -> LivePushError {
        LivePushError(.hlsWriteFailed, "\(path): \(String(cString: strerror(errno)))")
    }
}
