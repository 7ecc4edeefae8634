#if canImport(Glibc)
import Glibc
#endif

/// The directory that every file path of a channel configuration and of the control API must
/// stay in: the configuration's directory, or the `mediaRoot` it names.
///
/// The control API takes paths from whoever holds its token; without a root, a caller could
/// push any readable file to their own URL, or make a recording overwrite any writable one. So a
/// relative path is resolved against the root, and the result must lie inside it once symlinks
/// are followed. A file to read must be a regular file (a device like /dev/zero would be read
/// without end, a FIFO would block). A file to write may not exist as anything but a regular
/// file (a symlink there could point anywhere).
package struct MediaRoot: Sendable, Equatable {
    /// The root, canonical (symlinks resolved).
    package let path: String

    /// Throws `pathOutsideMediaRoot` when `directory` is not an existing directory.
    package init(_ directory: String) throws(LivePushError) {
        guard let canonical = Self.realPath(directory), Self.fileType(canonical, followingLinks: true) == S_IFDIR else {
            throw LivePushError(.pathOutsideMediaRoot, "the media root \(directory) is not a directory")
        }
        path = canonical
    }

    /// `value` (relative to the root, or absolute) as a canonical path inside the root to an
    /// existing regular file. The error's detail says which and why.
    package func fileToRead(_ value: String) throws(LivePushError) -> String {
        let joined = joined(value)
        guard let canonical = Self.realPath(joined) else {
            throw LivePushError(.pathOutsideMediaRoot, "\(value) does not exist or cannot be read")
        }
        guard contains(canonical) else { throw outside(value) }
        guard Self.fileType(canonical, followingLinks: true) == S_IFREG, access(canonical, R_OK) == 0 else {
            throw LivePushError(.pathOutsideMediaRoot, "\(value) is not a readable regular file")
        }
        return canonical
    }

    /// `value` as a path inside the root where a file may be created: its directory exists
    /// inside the root, and nothing but a regular file is there now.
    package func fileToWrite(_ value: String) throws(LivePushError) -> String {
        let joined = joined(value)
        guard let slash = joined.lastIndex(of: "/") else { throw outside(value) }
        let name = String(joined[joined.index(after: slash)...])
        guard !name.isEmpty, name != ".", name != ".." else { throw outside(value) }
        guard let directory = Self.realPath(slash == joined.startIndex ? "/" : String(joined[..<slash])), contains(directory) else {
            throw outside(value)
        }
        let target = directory + "/" + name
        if let type = Self.fileType(target, followingLinks: false), type != S_IFREG {
            throw LivePushError(.pathOutsideMediaRoot, "\(value) exists and is not a regular file")
        }
        return target
    }

    private func joined(_ value: String) -> String {
        value.hasPrefix("/") ? value : path + "/" + value
    }

    private func contains(_ canonical: String) -> Bool {
        canonical == path || canonical.hasPrefix(path == "/" ? "/" : path + "/")
    }

    private func outside(_ value: String) -> LivePushError {
        LivePushError(.pathOutsideMediaRoot, "\(value) is outside the media root \(path)")
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The `S_IFMT` bits of `path`, nil when it does not exist.
    static func fileType(_ path: String, followingLinks: Bool) -> mode_t? {
        var info = stat()
        let rc = followingLinks ? stat(path, &info) : lstat(path, &info)
        return rc == 0 ? info.st_mode & S_IFMT : nil
    }
}
