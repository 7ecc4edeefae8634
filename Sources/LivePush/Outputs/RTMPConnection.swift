/// An RTMP output's published connection: FLV tag bodies (``FLVPacketizer``) chunked onto an
/// ``RTMPSession``.
final class RTMPConnection: OutputConnection {
    let session: RTMPSession
    /// What this connection sends of the output's video, from the server's connect answer.
    let plan: RTMPTrackPlan
    private var packetizer: FLVPacketizer

    init(session: RTMPSession, info: StreamInfo, multitrack: RTMPMultitrack) {
        self.session = session
        plan = RTMPTrackPlan.make(info: info, answer: session.serverCapabilities, multitrack: multitrack)
        packetizer = FLVPacketizer(info: info, tracks: plan.tracks)
    }

    func carries(_ packet: MediaPacket) -> Bool { packetizer.carries(packet) }

    func header(at time: Int64) -> [FLVMessage] {
        packetizer.header(timestampMs: UInt32(clamping: max(0, time) / 1000))
    }

    func trailer(at time: Int64) -> [FLVMessage] {
        packetizer.trailer(timestampMs: UInt32(clamping: max(0, time) / 1000))
    }

    func message(for packet: MediaPacket) -> FLVMessage { packetizer.message(for: packet) }
    func bodyBytes(of message: FLVMessage) -> Int { message.bodySize }
    func wireBytes(of message: FLVMessage) -> Int64 { session.wireBytes(of: message) }
    func hasRoom(for bytes: Int64) -> Bool { session.hasRoom(for: bytes) }
    func send(_ message: FLVMessage) throws(LivePushError) { try session.send(message) }
    func flush() throws(LivePushError) -> Bool { try session.flush() }
    var hasUnwrittenBytes: Bool { session.hasUnwrittenBytes }
    var bytesSent: Int64 { session.bytesSent }
    var transportBacklog: Int64 { session.sendBufferMemory?.queued ?? 0 }
    func serviceIncoming() throws(LivePushError) -> UInt32? { try session.serviceIncoming() }
    func takeLinkReport() -> LinkReport? { session.takeReconnectRequest().map(LinkReport.reconnectRequest) }
    func waitUntilWritable(timeout: Duration) { session.waitUntilWritable(timeout: timeout) }
    func close(graceful: Bool) { session.close(graceful: graceful) }
}
