import LivePushWire
#if canImport(Glibc)
import Glibc
#endif

/// Streams FLV tags to a file through a small buffer (media is never held in memory beyond it).
///
/// Plain POSIX file I/O: the receiver runs inside the `livepush` process, and Foundation
/// would add more to its memory footprint than everything else in the receiver.
final class FLVFileSink {
    struct WriteError: Error, CustomStringConvertible {
        let path: String
        let reason: String
        var code: Int32 = 0
        var description: String { "\(path): \(reason)" }
    }

    let path: String
    private let fd: Int32
    private var buffer: [UInt8] = []
    private let flushThreshold: Int
    private var hasAudio = false
    private var hasVideo = false
    private var closed = false

    /// With `createNew`, the file must not exist yet (nor be a symlink): nothing that is already
    /// there is ever truncated or written through.
    init(path: String, flushThreshold: Int = 256 * 1024, createNew: Bool = false) throws {
        self.path = path
        self.flushThreshold = flushThreshold
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            try Self.makeDirectories(String(path[..<slash]))
        }
        let mode = createNew ? O_EXCL | O_NOFOLLOW : O_TRUNC
        fd = open(path, O_WRONLY | O_CREAT | mode | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw WriteError(path: path, reason: String(cString: strerror(errno)), code: errno) }
        buffer.reserveCapacity(flushThreshold + 64 * 1024)
        // Both flags for now; corrected on close once we know which tracks were present.
        buffer += FLVFileWriter.header(hasAudio: true, hasVideo: true)
    }

    deinit {
        if !closed { Glibc.close(fd) }
    }

    func write(type: FLVTagType, timestampMs: UInt32, body: ArraySlice<UInt8>) throws {
        precondition(!closed)
        if type == .audio { hasAudio = true }
        if type == .video { hasVideo = true }
        buffer += FLVFileWriter.tagHeader(type: type, timestampMs: timestampMs, bodySize: body.count)
        buffer += body
        buffer += FLVFileWriter.previousTagSize(bodySize: body.count)
        if buffer.count >= flushThreshold { try flush() }
    }

    func flush() throws {
        guard !buffer.isEmpty else { return }
        try writeAll(buffer, at: nil)
        buffer.removeAll(keepingCapacity: true)
    }

    func close() throws {
        guard !closed else { return }
        closed = true
        defer { Glibc.close(fd) }
        try flush()
        if hasAudio != hasVideo {
            let flags: UInt8 = (hasAudio ? 0x04 : 0) | (hasVideo ? 0x01 : 0)
            try writeAll([flags], at: 4)
        }
        fsync(fd)
    }

    private func writeAll(_ bytes: [UInt8], at offset: Int?) throws {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                let start = raw.baseAddress! + done
                if let offset { return pwrite(fd, start, raw.count - done, off_t(offset + done)) }
                return Glibc.write(fd, start, raw.count - done)
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw WriteError(path: path, reason: String(cString: strerror(errno))) }
            done += n
        }
    }

    private static func makeDirectories(_ directory: String) throws {
        var current = directory.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o755) != 0 && errno != EEXIST {
                throw WriteError(path: current, reason: String(cString: strerror(errno)))
            }
        }
    }
}
