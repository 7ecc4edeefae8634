/// An HLS output's connection as the send loop drives it: each packet goes into the stream
/// (``HLSStream``: MPEG-TS into the open segment, the segmenter's decision), and a completed
/// segment's writes (the segment, the playlist, a removal) go to the output's writer
/// (``HLSWriter``), whose jobs store them. Nothing here blocks: the writer's queue is the
/// transport's buffer, and its fullness is this connection's room.
///
/// Cues arrive as `.cue` packets (splice_info_sections): they go into the segments on the
/// SCTE-35 PID, as for SRT, and start segments and cue tags in the playlist.
final class HLSConnection: OutputConnection {
    /// What one packet gives: the writes of the segment it completed (usually none), and the
    /// TS bytes it added to the open segment.
    struct Message {
        var writes: [HLSWrite]
        var mediaBytes: Int
    }

    let writer: HLSWriter
    private var stream: HLSVariantSet
    /// Bytes handed to the writer.
    private(set) var bytesSent: Int64 = 0

    init(writer: HLSWriter, stream: HLSVariantSet) {
        self.writer = writer
        self.stream = stream
    }

    /// Every segment opens with PAT and PMT (the stream writes them); nothing goes first.
    func header(at time: Int64) -> [Message] { [] }
    func trailer(at time: Int64) -> [Message] { [] }

    func message(for packet: MediaPacket) -> Message {
        let before = stream.figures.bytesMuxed
        let writes = stream.take(packet)
        return Message(writes: writes, mediaBytes: Int(stream.figures.bytesMuxed - before))
    }

    func bodyBytes(of message: Message) -> Int { message.mediaBytes }

    func wireBytes(of message: Message) -> Int64 {
        message.writes.isEmpty ? 0 : Int64(message.writes.reduce(0) { $0 + $1.byteCount })
    }

    func hasRoom(for bytes: Int64) -> Bool { writer.hasRoom(for: bytes) }

    func send(_ message: Message) throws(LivePushError) {
        // A CMAF muxer that refused a frame: the stream cannot go on as it is.
        if let failure = stream.takeFailure() { throw failure }
        guard !message.writes.isEmpty else { return }
        writer.enqueue(message.writes, streamFigures: stream.figures)
        bytesSent += wireBytes(of: message)
    }

    /// The writes went to the writer's queue in ``send(_:)``.
    func flush() throws(LivePushError) -> Bool { true }
    var hasUnwrittenBytes: Bool { false }
    var transportBacklog: Int64 { writer.backlog }

    /// A write that failed ends the connection with its error.
    func serviceIncoming() throws(LivePushError) -> UInt32? {
        if let failure = writer.takeFailure() { throw failure }
        return nil
    }

    func waitUntilWritable(timeout: Duration) { writer.waitForRoom(timeout: timeout) }

    /// Splices the stream moved to a later keyframe, read at the service turns like a link's figures.
    func takeLinkReport() -> LinkReport? {
        let moved = stream.takeMovedSplices()
        return moved.isEmpty ? nil : .hlsSplicesMoved(moved)
    }

    /// The stream waits in the writer: for the next connection, or for the output's end
    /// (``HLSWriter/finish(limit:)``, which writes the last segment and the final playlist).
    func close(graceful: Bool) { writer.park(stream) }
}
