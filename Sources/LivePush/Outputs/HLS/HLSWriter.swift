import DequeModule
import LivePushWire
import Synchronization

/// An HLS output's side that blocks: its store's writes, done by jobs on the HLS workers
/// (``ConnectionWorkers/hlsWriting``) while writes are queued, so an idle output holds no
/// thread and no send loop ever waits for a disk or an origin.
///
/// Between the send loop and the jobs is a queue of at most ``maxQueuedBytes`` (a segment
/// larger than that is still taken when the queue is empty). Its fullness is the connection's
/// room (``HLSConnection/hasRoom(for:)``): while it is full, the send loop leaves the output's
/// packets in the output's queue, which then does what it does for a slow network: a real-time
/// push sheds by its drop policy (counted in the output's dropped frames), a `--fast` push
/// waits; a queue that takes nothing for the send timeout ends the connection
/// (`sendDataTimeout`), as a stalled socket would.
///
/// A write that fails (a full disk, a refused upload) stops the jobs with the write still at the
/// head of the queue; the connection reports the error at its next service turn (the output
/// then reconnects by its policy), and the next connect (``reopen()``) tries that write again
/// before anything else. The stream itself (numbering, the open segment and break) is parked here
/// between connections, and finished here when the output ends (``finish(limit:)``).
final class HLSWriter: Sendable {
    /// Bytes the queue holds before the connection has no room.
    static let maxQueuedBytes = 16 * 1024 * 1024
    /// Writes a job does before it lets other outputs' jobs have the thread.
    static let writesPerTurn = 8

    private struct Queue {
        var writes: Deque<HLSWrite> = []
        var bytes = 0
        /// A write failed: the jobs stop until a connect tries it again.
        var stalled = false
        /// The failure not reported yet.
        var failure: LivePushError?
        /// The stream between two connections.
        var parked: HLSVariantSet?
        var figures = HLSWriterFigures()
    }

    let store: any HLSStore
    /// What a new stream is made with (the first connect).
    let playlistName: String
    let options: HLSOptions
    let forms: HLSCueTags.Forms
    let wallStart: Int64
    private let queue = Mutex(Queue())
    private let drain = SerialDrain(on: .hlsWriting)
    /// Wakes a send loop's close and a finish waiting for the queue.
    private let progress = ProgressSignal()

    init(store: any HLSStore, playlistName: String, options: HLSOptions, forms: HLSCueTags.Forms, wallStart: Int64) {
        self.store = store
        self.playlistName = playlistName
        self.options = options
        self.forms = forms
        self.wallStart = wallStart
    }

    // MARK: Connections

    /// A connect (on a connection worker): the store takes writes, and the write that failed
    /// last, if any, goes now. Throws when it still fails: the connect failed.
    func reopen() throws(LivePushError) {
        try store.check()
        guard let head = queue.withLock({ $0.stalled ? $0.writes.first : nil }) else { return }
        // No job runs while stalled: this thread alone writes.
        try store.perform(head)
        queue.withLock { queue in
            queue.writes.removeFirst()
            queue.bytes -= head.byteCount
            queue.stalled = false
            queue.failure = nil
            queue.figures.count(head)
        }
        progress.wake()
        drain.offer { self.turn() }
    }

    /// The stream to go on with: the one parked by the last connection, else a new one for `info`.
    func takeStream(for info: StreamInfo) throws(LivePushError) -> HLSVariantSet {
        if let parked = queue.withLock({ $0.parked.take() }) { return parked }
        return try HLSVariantSet.make(playlistName: playlistName, options: options, forms: forms, info: info, wallStart: wallStart)
    }

    /// A connection ended: its stream waits for the next one, or for the end.
    func park(_ stream: HLSVariantSet) {
        queue.withLock { queue in
            queue.figures.stream = stream.figures
            queue.parked = stream
        }
    }

    /// The output ended (on a closing worker): the parked stream's last segment and final
    /// playlist are queued, and this waits until the queue is written, a write failed, or
    /// `limit` passed.
    func finish(limit: Duration) {
        let writes = queue.withLock { queue -> [HLSWrite] in
            guard var stream = queue.parked.take() else { return [] }
            defer { queue.figures.stream = stream.figures }
            return stream.finish()
        }
        // A write that failed gets one more try. Its failure was reported when it happened (the
        // connection ended with it: `connectionLost`, hlsWriteFailed); failing again, the store
        // keeps what it last took, and the wait below ends at once (stalled).
        if queue.withLock({ $0.stalled }) { try? reopen() }
        enqueue(writes)
        progress.wait(limit: limit) { queue.withLock { $0.writes.isEmpty || $0.stalled } }
    }

    // MARK: The send loop's side

    /// Queues writes; a job writes them. `streamFigures`: the stream's, as of these writes.
    func enqueue(_ writes: [HLSWrite], streamFigures: HLSFigures? = nil) {
        guard !writes.isEmpty else { return }
        let stalled = queue.withLock { queue in
            if let streamFigures { queue.figures.stream = streamFigures }
            queue.writes.append(contentsOf: writes)
            queue.bytes += writes.reduce(0) { $0 + $1.byteCount }
            queue.figures.mostQueuedBytes = max(queue.figures.mostQueuedBytes, queue.bytes)
            return queue.stalled
        }
        if !stalled { drain.offer { self.turn() } }
    }

    /// Whether `bytes` more fit: the queue is empty, or they fit under ``maxQueuedBytes``.
    func hasRoom(for bytes: Int64) -> Bool {
        let queued = queue.withLock { $0.bytes }
        return queued == 0 || Int64(queued) + bytes <= Int64(Self.maxQueuedBytes)
    }

    /// Bytes queued and not written yet.
    var backlog: Int64 { Int64(queue.withLock { $0.bytes }) }

    /// The failure of a write, once (the connection ends with it).
    func takeFailure() -> LivePushError? {
        queue.withLock { $0.failure.take() }
    }

    /// Waits until the queue has room for a small write, a write failed, or `timeout` passed.
    func waitForRoom(timeout: Duration) {
        progress.wait(limit: timeout) { queue.withLock { $0.bytes + 1024 <= Self.maxQueuedBytes || $0.stalled } }
    }

    /// What was written, and what the stream counted (as of the last connection's end).
    var figures: HLSWriterFigures { queue.withLock { $0.figures } }

    // MARK: Write jobs

    /// One job's turn: the queued writes, in order, until the queue is empty, a write fails, or
    /// the turn is up. A segment removal that fails is counted and skipped: it leaves a file
    /// behind, and holds up nothing.
    private func turn() -> DrainSchedule.Turn {
        for _ in 0..<Self.writesPerTurn {
            guard let write = queue.withLock({ $0.stalled ? nil : $0.writes.first }) else { return .drained }
            var failure: LivePushError?
            do {
                try store.perform(write)
            } catch {
                failure = error
            }
            queue.withLock { queue in
                if let failure, case .put = write {
                    queue.stalled = true
                    queue.failure = failure
                    return
                }
                queue.writes.removeFirst()
                queue.bytes -= write.byteCount
                if failure == nil { queue.figures.count(write) } else { queue.figures.deletesFailed += 1 }
            }
            progress.wake()
        }
        return .more
    }
}

/// What an HLS output's writer did.
struct HLSWriterFigures: Sendable, Equatable {
    /// Files stored (segments and playlists) and their bytes.
    var puts = 0
    var bytesWritten: Int64 = 0
    /// Segments removed, and removals that failed.
    var deletes = 0
    var deletesFailed = 0
    /// The most the queue held, bytes.
    var mostQueuedBytes = 0
    /// The stream's own figures (segments, moved splices, forced cuts).
    var stream = HLSFigures()

    mutating func count(_ write: HLSWrite) {
        switch write {
        case .put(_, let bytes):
            puts += 1
            bytesWritten += Int64(bytes.count)
        case .delete:
            deletes += 1
        }
    }
}
