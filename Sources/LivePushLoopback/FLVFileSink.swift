import Foundation
import LivePushWire

/// Streams FLV tags to a file through a small buffer (media is never held in memory beyond it).
final class FLVFileSink {
    let path: String
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private let flushThreshold: Int
    private var hasAudio = false
    private var hasVideo = false
    private var closed = false

    init(path: String, flushThreshold: Int = 256 * 1024) throws {
        self.path = path
        self.flushThreshold = flushThreshold
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
        }
        handle = try FileHandle(forWritingTo: url)
        buffer.reserveCapacity(flushThreshold + 64 * 1024)
        // Both flags for now; corrected on close once we know which tracks were present.
        buffer += FLVFileWriter.header(hasAudio: true, hasVideo: true)
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
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    func close() throws {
        guard !closed else { return }
        closed = true
        defer { try? handle.close() }
        try flush()
        if hasAudio != hasVideo {
            let flags: UInt8 = (hasAudio ? 0x04 : 0) | (hasVideo ? 0x01 : 0)
            try handle.seek(toOffset: 4)
            try handle.write(contentsOf: [flags])
        }
        try handle.synchronize()
    }
}
