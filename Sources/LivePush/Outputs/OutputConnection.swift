/// A published connection as ``Publishing`` drives it from a ``SendLoop``, whatever its
/// protocol: RTMP (``RTMPConnection``) or SRT (``SRTConnection``).
///
/// A connection frames the output's packets itself (FLV tags in RTMP messages; MPEG-TS) and
/// never blocks the loop: what its transport does not take now waits in it until the next
/// turn. Everything else an output is (its queue and drop policy, reconnect, congestion,
/// figures) is the same for every kind and lives in ``PushOutput``.
protocol OutputConnection: AnyObject {
    associatedtype Message

    /// What goes first on every connection (RTMP: metadata and sequence headers; TS: the
    /// program tables), for media that starts at output time `time` (µs).
    func header(at time: Int64) -> [Message]
    /// What ends a stream that was sent whole, at output time `time` (Enhanced RTMP's
    /// `SequenceEnd`); sent before a graceful close.
    func trailer(at time: Int64) -> [Message]
    /// Whether this connection sends `packet` at all (an RTMP server that takes no multitrack
    /// gets a ladder's first variant only); one it does not is taken from the queue unsent.
    func carries(_ packet: MediaPacket) -> Bool
    /// One packet, stamped on the output timeline, framed for this connection. A sequence
    /// header changes the framing of the packets after it.
    func message(for packet: MediaPacket) -> Message
    /// The media bytes of `message`, as the output's figures count them (no framing).
    func bodyBytes(of message: Message) -> Int
    /// Bytes `message` adds to ``bytesSent``, at most.
    func wireBytes(of message: Message) -> Int64
    /// Whether sending `bytes` now would not have to wait for the transport.
    func hasRoom(for bytes: Int64) -> Bool
    /// Queues a message; it is written at the next ``flush()``, or sooner.
    func send(_ message: Message) throws(LivePushError)
    /// Writes what is queued as far as the transport takes it; true when nothing is left.
    func flush() throws(LivePushError) -> Bool
    /// Whether bytes wait for the transport (the last flush could not write them all).
    var hasUnwrittenBytes: Bool { get }
    /// Bytes counted as sent on this connection (the resend history's positions).
    var bytesSent: Int64 { get }
    /// What the transport holds and has not delivered yet (bytes): a stall is when this does
    /// not shrink while the connection takes nothing.
    var transportBacklog: Int64 { get }
    /// Reads what the peer sent (acknowledgements, errors, a close); returns the bytes the peer
    /// acknowledged, modulo 2^32, when it said (RTMP), for the resend history.
    func serviceIncoming() throws(LivePushError) -> UInt32?
    /// What the transport measured of the link since the last call, when it measures it (SRT's
    /// counters, a WebRTC peer's reports); read after each ``serviceIncoming()``.
    func takeLinkReport() -> LinkReport?
    /// Waits until the transport can take more, or `timeout` passes.
    func waitUntilWritable(timeout: Duration)
    /// Ends the connection; a graceful close tells the peer that the stream ended.
    func close(graceful: Bool)
}

extension OutputConnection {
    func takeLinkReport() -> LinkReport? { nil }
    func carries(_ packet: MediaPacket) -> Bool { true }
}

/// A link as its transport measured it, for the output's figures and network signals.
enum LinkReport {
    case srt(SRTLinkStats)
    case webRTC(WebRTCLinkStats)
    /// Not the link's: an HLS output moved splices to later keyframes since the last report.
    case hlsSplicesMoved([HLSStream.MovedSplice])
    /// Not the link's: the server asked the client to reconnect (Enhanced RTMP v2).
    case reconnectRequest(ServerReconnectRequest)
}
