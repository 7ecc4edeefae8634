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
    init(path: String, info: StreamInfo, waitsWhenFull: Bool,
         onFailure: @escaping @Sendable (LivePushError) -> Void) throws(LivePushError) {
        self.path = path
        self.packetizer = FLVPacketizer(info: info)
        self.waitsWhenFull = waitsWhenFull
        self.onFailure = onFailure
        guard let file = fopen(path, "wb") else {
            throw LivePushError(.recordFailed, "\(path): \(String(cString: strerror(errno)))")
        }
        let handle = UncheckedTransfer(value: file)  // the writer thread alone uses it
        WorkerThread.start(name: "livepush.record") { [self] in run(handle.value) }
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
        if !write(FLVFileWriter.header(hasAudio: info.audio != nil, hasVideo: info.video != nil), to: file) {
            error = writeError()
        }
        for message in packetizer.header() where error == nil {
            if !write(message, to: file) { error = writeError() }
        }
        while error == nil, let packet = next() {
            if !write(packetizer.message(for: packet), to: file) { error = writeError() }
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
        let ok = write(head, to: file) && write(message.header, to: file) && write(message.payload, to: file)
            && write(FLVFileWriter.previousTagSize(bodySize: message.bodySize), to: file)
        if ok { lock.withLock { writtenBytes += Int64(15 + message.bodySize) } }
        return ok
    }

    private func write(_ bytes: [UInt8], to file: UnsafeMutablePointer<FILE>) -> Bool {
        bytes.isEmpty || bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) == $0.count }
    }

    private func writeError() -> LivePushError {
        LivePushError(.recordFailed, "\(path): \(String(cString: strerror(errno)))")
    }
}
