import DequeModule
import LivePushWire
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An output that writes the push to a local FLV file, fed by the producer beside the network
/// send queue: it records what the source produced on the output clock, so it keeps recording
/// while the network is down (a reconnect costs the recording nothing).
///
/// The writes are jobs on the recording workers (``ConnectionWorkers/recording``): a job runs
/// while packets are queued, writes them and returns, so a recording holds no thread while it
/// has nothing to write. The queue between holds at most ``maxQueuedBytes``. When it is full
/// (the disk is slower than the source), a `--fast` push waits for it (nothing is lost) and a
/// real-time push drops the packet, counted in ``figures`` (`PushStats.recordingDrops`). A write error ends the
/// recording (reported once through `onFailure`); the push goes on. Sequence headers (a
/// change of codec configuration) are never dropped.
final class FLVRecorder: Sendable {
    static let maxQueuedBytes = 16 * 1024 * 1024
    /// Bytes a job writes before it lets other recordings' jobs have the thread.
    static let bytesPerTurn = 1024 * 1024

    private struct Queue {
        var packets: Deque<MediaPacket> = []
        var bytes = 0
        var finishing = false
        var closed = false
        var failed = false
        var droppedPackets = 0
        var writtenBytes: Int64 = 0
    }

    /// What only the write jobs use (one at a time): the file and where the writing stands.
    private struct Writer {
        var file: UnsafeMutablePointer<FILE>?
        var packetizer: FLVPacketizer
        var headerWritten = false
        var durationOffset: Int?
        var lastTimestampMs: UInt32 = 0
    }

    private enum Step {
        case write(MediaPacket)
        case close
        case wait
    }

    let path: String
    private let waitsWhenFull: Bool
    private let onFailure: @Sendable (LivePushError) -> Void
    private let queue = Mutex(Queue())
    private let writer: Mutex<Writer>
    private let drain = SerialDrain(on: .recording)
    /// Wakes a `--fast` producer waiting for room, and a stop waiting for the file to close.
    private let progress = ProgressSignal()

    /// Creates (truncates) the file now, so that a path that cannot be written fails `start`.
    /// With `keepsExisting`, nothing that exists is truncated: see ``PushConfig/recordKeepsExisting``.
    init(path: String, info: StreamInfo, waitsWhenFull: Bool, keepsExisting: Bool = false,
         onFailure: @escaping @Sendable (LivePushError) -> Void) throws(LivePushError) {
        self.waitsWhenFull = waitsWhenFull
        self.onFailure = onFailure
        let opened = keepsExisting ? Self.createNew(path) : (path: path, file: fopen(path, "wb"))
        self.path = opened.path
        guard let file = opened.file else {
            throw LivePushError(.recordFailed, "\(opened.path): \(String(cString: strerror(errno)))")
        }
        writer = Mutex(Writer(file: file, packetizer: FLVPacketizer(info: info)))
        // The file's header goes out now, so a recording stopped before its first packet is a valid file.
        drain.offer { self.turn() }
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
        queue.withLock { ($0.writtenBytes, $0.droppedPackets) }
    }

    /// Queues a packet stamped on the output clock. A `--fast` push waits here while the queue is full.
    func offer(_ packet: MediaPacket) {
        enum Outcome { case queued, refused, full }
        while true {
            let outcome = queue.withLock { queue -> Outcome in
                guard !queue.finishing, !queue.failed else { return .refused }
                // A sequence header is tiny and every later frame needs it: never dropped.
                if queue.bytes < Self.maxQueuedBytes || packet.isSequenceHeader {
                    queue.packets.append(packet)
                    queue.bytes += packet.data.count
                    return .queued
                }
                if waitsWhenFull { return .full }
                queue.droppedPackets += 1
                return .refused
            }
            switch outcome {
            case .queued:
                drain.offer { self.turn() }
                return
            case .refused:
                return
            case .full:
                progress.wait {
                    queue.withLock { $0.bytes < Self.maxQueuedBytes || $0.finishing || $0.failed }
                }
            }
        }
    }

    /// Writes what is queued, closes the file and returns once it is closed.
    func finish() {
        queue.withLock { $0.finishing = true }
        progress.wake()  // a producer waiting for room gives up
        drain.offer { self.turn() }
        progress.wait { queue.withLock { $0.closed } }
    }

    // MARK: - Write jobs

    /// One job's turn: writes what is queued (up to ``bytesPerTurn``), and closes the file once
    /// finishing and drained.
    private func turn() -> DrainSchedule.Turn {
        let (turn, failure) = writer.withLock { writer -> (DrainSchedule.Turn, LivePushError?) in
            guard let file = writer.file else { return (.drained, nil) }  // closed
            if !writer.headerWritten {
                writer.headerWritten = true
                if let error = writeHeader(&writer, to: file) { return (.drained, close(&writer, failure: error)) }
            }
            var budget = Self.bytesPerTurn
            while true {
                let step = queue.withLock { queue -> Step in
                    if let packet = queue.packets.popFirst() {
                        queue.bytes -= packet.data.count
                        return .write(packet)
                    }
                    return queue.finishing ? .close : .wait
                }
                switch step {
                case .write(let packet):
                    progress.wake()  // a producer may wait for room
                    let message = writer.packetizer.message(for: packet)
                    guard write(message, to: file) else { return (.drained, close(&writer, failure: writeError())) }
                    writer.lastTimestampMs = max(writer.lastTimestampMs, message.timestampMs)
                    budget -= 15 + message.bodySize
                    if budget <= 0 { return (.more, nil) }
                case .close:
                    return (.drained, close(&writer, failure: nil))
                case .wait:
                    return (.drained, nil)
                }
            }
        }
        if let failure { onFailure(failure) }
        return turn
    }

    /// The FLV header, then `onMetaData` and the codec configuration. Returns the error, if any.
    private func writeHeader(_ writer: inout Writer, to file: UnsafeMutablePointer<FILE>) -> LivePushError? {
        let info = writer.packetizer.info
        let fileHeader = FLVFileWriter.header(hasAudio: info.audio != nil, hasVideo: info.video != nil)
        guard write(fileHeader, to: file) else { return writeError() }
        var header = writer.packetizer.header()
        // In a file the script tag is `onMetaData` itself (`@setDataFrame` tells an RTMP server
        // to store what follows). Its duration is written when the recording ends.
        header[0].payload = FLVBody.metadata(writer.packetizer.metadata, withSetDataFrame: false)
        writer.durationOffset = Self.durationValueOffset(in: header[0].payload).map { fileHeader.count + 11 + $0 }
        for message in header where !write(message, to: file) { return writeError() }
        return nil
    }

    /// Patches the duration in (unless a write failed), closes the file and says so to a stop
    /// waiting for it. Returns the error to report, if any.
    private func close(_ writer: inout Writer, failure: LivePushError?) -> LivePushError? {
        guard let file = writer.file else { return nil }
        writer.file = nil
        var error = failure
        if error == nil, let offset = writer.durationOffset,
           !patchDuration(Double(writer.lastTimestampMs) / 1000, at: offset, in: file) {
            error = writeError()
        }
        if fclose(file) != 0 && error == nil { error = writeError() }
        queue.withLock { queue in
            if error != nil { queue.failed = true }
            queue.closed = true
            queue.packets.removeAll()
            queue.bytes = 0
        }
        progress.wake()
        return error
    }

    private func write(_ message: FLVMessage, to file: UnsafeMutablePointer<FILE>) -> Bool {
        let head = FLVFileWriter.tagHeader(type: message.type, timestampMs: message.timestampMs, bodySize: message.bodySize)
        let ok = write(head, to: file) && write(message.header.bytes, to: file) && write(message.payload, to: file)
            && write(FLVFileWriter.previousTagSize(bodySize: message.bodySize), to: file)
        if ok { queue.withLock { $0.writtenBytes += Int64(15 + message.bodySize) } }
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
