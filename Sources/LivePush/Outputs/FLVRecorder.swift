import DequeModule
import LivePushWire
#if canImport(Glibc)
import Glibc
#endif

/// An output that writes the push to a local FLV file, fed by the producer beside the network
/// send queue: it records what the source produced on the output clock, so it keeps recording
/// while the network is down (a reconnect costs the recording nothing).
///
/// Its own thread writes; the queue between holds at most ``maxQueuedBytes``. When it is full
/// (the disk is slower than the source), a `--fast` push waits for it (nothing is lost) and a
/// real-time push drops the packet, counted in ``droppedPackets``. A write error ends the
/// recording (reported once through `onFailure`); the push goes on. Sequence headers (a
/// change of codec configuration) are never dropped.
final class FLVRecorder: @unchecked Sendable {
    static let maxQueuedBytes = 16 * 1024 * 1024

    let path: String
    private let packetizer: FLVPacketizer
    private let waitsWhenFull: Bool
    private let onFailure: @Sendable (LivePushError) -> Void
    private let lock = ConditionLock()
    // Guarded by `lock`.
    private var queue: Deque<MediaPacket> = []
    private var queuedBytes = 0
    private var finishing = false
    private var closed = false
    private var failed = false
    private var droppedPackets = 0
    private var writtenBytes: Int64 = 0

    /// Creates (truncates) the file now, so that a path that cannot be written fails `start`.
    /// With `keepsExisting`, nothing that exists is truncated: see ``PushConfig/recordKeepsExisting``.
    init(path: String, info: StreamInfo, waitsWhenFull: Bool, keepsExisting: Bool = false,
         onFailure: @escaping @Sendable (LivePushError) -> Void) throws(LivePushError) {
        self.packetizer = FLVPacketizer(info: info)
        self.waitsWhenFull = waitsWhenFull
        self.onFailure = onFailure
        let opened = keepsExisting ? Self.createNew(path) : (path: path, file: fopen(path, "wb"))
        self.path = opened.path
        guard let file = opened.file else {
            throw LivePushError(.recordFailed, "\(opened.path): \(String(cString: strerror(errno)))")
        }
        let handle = UncheckedTransfer(value: file)  // the writer thread alone uses it
        WorkerThread.start(name: "livepush.record") { [self] in run(handle.value) }
    }

    /// The first of `NAME.flv`, `NAME-1.flv`, … that does not exist, created exclusively.
    private static func createNew(_ path: String) -> (path: String, file: UnsafeMutablePointer<FILE>?) {
        let dot = path.lastIndex(of: ".").flatMap { $0 > (path.lastIndex(of: "/") ?? path.startIndex) ? $0 : nil }
        let (base, suffix) = dot.map { (String(path[..<$0]), String(path[$0...])) } ?? (path, "")
        var candidate = path
        for attempt in 1...1000 {
            let fd = open(candidate, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if fd >= 0 { return (candidate, fdopen(fd, "wb")) }
            guard errno == EEXIST || errno == ELOOP else { return (candidate, nil) }
            candidate = "\(base)-\(attempt)\(suffix)"
        }
        return (candidate, nil)
    }

    /// Bytes written to the file so far, and packets dropped because the queue was full.
    var figures: (written: Int64, dropped: Int) {
        lock.withLock { (writtenBytes, droppedPackets) }
    }

    /// Queues a packet stamped on the output clock.
    func offer(_ packet: MediaPacket) {
        lock.withLock {
            while waitsWhenFull && queuedBytes >= Self.maxQueuedBytes && !finishing && !failed { lock.wait() }
            guard !finishing, !failed else { return }
            // A sequence header is tiny and every later frame needs it: never dropped.
            guard queuedBytes < Self.maxQueuedBytes || packet.isSequenceHeader else {
                droppedPackets += 1
                return
            }
            queue.append(packet)
            queuedBytes += packet.data.count
            lock.broadcast()
        }
    }

    /// Writes what is queued, closes the file and returns once it is closed.
    func finish() {
        lock.withLock {
            finishing = true
            lock.broadcast()
            while !closed { lock.wait() }
        }
    }

    // MARK: - Writer thread

    private func run(_ file: UnsafeMutablePointer<FILE>) {
        var error: LivePushError?
        var packetizer = self.packetizer
        let info = packetizer.info
        let fileHeader = FLVFileWriter.header(hasAudio: info.audio != nil, hasVideo: info.video != nil)
        if !write(fileHeader, to: file) { error = writeError() }
        var header = packetizer.header()
        // In a file the script tag is `onMetaData` itself (`@setDataFrame` tells an RTMP server
        // to store what follows). Its duration is written when the recording ends.
        header[0].payload = FLVBody.metadata(packetizer.metadata, withSetDataFrame: false)
        let durationOffset = Self.durationValueOffset(in: header[0].payload).map { fileHeader.count + 11 + $0 }
        for message in header where error == nil {
            if !write(message, to: file) { error = writeError() }
        }
        var lastTimestampMs: UInt32 = 0
        while error == nil, let packet = next() {
            let message = packetizer.message(for: packet)
            if !write(message, to: file) { error = writeError() }
            lastTimestampMs = max(lastTimestampMs, message.timestampMs)
        }
        if error == nil, let durationOffset, !patchDuration(Double(lastTimestampMs) / 1000, at: durationOffset, in: file) {
            error = writeError()
        }
        if fclose(file) != 0 && error == nil { error = writeError() }
        lock.withLock {
            if error != nil { failed = true }
            closed = true
            queue.removeAll()
            queuedBytes = 0
            lock.broadcast()
        }
        if let error { onFailure(error) }
    }

    /// The next packet to write, or nil once finishing and drained.
    private func next() -> MediaPacket? {
        lock.withLock {
            while queue.isEmpty && !finishing { lock.wait() }
            guard let packet = queue.popFirst() else { return nil }
            queuedBytes -= packet.data.count
            lock.broadcast()  // a producer may wait for room
            return packet
        }
    }

    private func write(_ message: FLVMessage, to file: UnsafeMutablePointer<FILE>) -> Bool {
        let head = FLVFileWriter.tagHeader(type: message.type, timestampMs: message.timestampMs, bodySize: message.bodySize)
        let ok = write(head, to: file) && write(message.header.bytes, to: file) && write(message.payload, to: file)
            && write(FLVFileWriter.previousTagSize(bodySize: message.bodySize), to: file)
        if ok { lock.withLock { writtenBytes += Int64(15 + message.bodySize) } }
        return ok
    }

    private func write(_ bytes: [UInt8], to file: UnsafeMutablePointer<FILE>) -> Bool {
        bytes.isEmpty || bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) == $0.count }
    }

    /// Where the 8 bytes of the `duration` number sit in an `onMetaData` body, if it has one:
    /// after the key (length 8, "duration") and the number marker.
    static func durationValueOffset(in body: [UInt8]) -> Int? {
        let key: [UInt8] = [0x00, 0x08] + Array("duration".utf8) + [0x00]
        guard body.count >= key.count + 8 else { return nil }
        for start in 0...(body.count - key.count - 8) where body[start..<(start + key.count)].elementsEqual(key) {
            return start + key.count
        }
        return nil
    }

    /// Writes the recording's duration (seconds, the last tag's time) into its `onMetaData`, as
    /// a player or ffprobe reads it; the file stays written to its end.
    private func patchDuration(_ seconds: Double, at offset: Int, in file: UnsafeMutablePointer<FILE>) -> Bool {
        guard fflush(file) == 0, fseek(file, offset, SEEK_SET) == 0 else { return false }
        let bits = seconds.bitPattern
        let bytes = (0..<8).map { UInt8(truncatingIfNeeded: bits >> (56 - 8 * UInt64($0))) }
        return write(bytes, to: file) && fseek(file, 0, SEEK_END) == 0
    }

    private func writeError() -> LivePushError {
        LivePushError(.recordFailed, "\(path): \(String(cString: strerror(errno)))")
    }
}
