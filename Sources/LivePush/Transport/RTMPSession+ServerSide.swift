import CRTMP
import LivePushWire
#if canImport(Glibc)
import Glibc
#endif

/// The server's side of a published connection: read by us, never waiting, once librtmp has
/// seen the publish start.
extension RTMPSession {
    /// Reads what the server sent, never waiting for more: acknowledgements, pings (answered),
    /// status messages. Returns the sequence number of the latest Acknowledgement read, if any.
    /// Throws when the server closed the connection or reported an error for the stream.
    ///
    /// librtmp reads the server until the publish starts; from the first call on, the reading is
    /// ours (``ServerMessages``): librtmp's read blocks until a whole packet is in, and a server
    /// that trickled one would hold the send loop, and every output on it, that long.
    @discardableResult
    func serviceIncoming() throws(LivePushError) -> UInt32? {
        guard isConnected else { throw LivePushError(.connectionLost, "the server closed the connection") }
        var messages = incoming ?? takeOverReading()
        defer { incoming = messages }
        var actions: [ServerMessages.Action] = []
        var budget = Self.readBudget
        while budget > 0 {
            switch readWithoutWaiting(max: budget) {
            case .bytes(let count):
                budget -= count
                actions += messages.receive(incomingBytes[..<count])
            case .wouldBlock:
                budget = 0
            case .closed:
                close(graceful: false)
                throw LivePushError(.connectionLost, "the server closed the connection")
            case .failed(let why):
                close(graceful: false)
                throw LivePushError(.connectionLost, why)
            }
        }
        var acknowledged: UInt32?
        for action in actions {
            switch action {
            case .acknowledged(let sequence): acknowledged = sequence
            case .send(let message):
                try sendControl(message)
                bytesSent += 16 + Int64(message.payload.count)  // the server's acknowledgements count it
            case .fail(let error):
                close(graceful: false)
                throw error
            case .reconnectRequest(let request):
                // The latest wins; the output reads it after this call (``takeReconnectRequest()``).
                reconnectRequest = request
            }
        }
        return acknowledged
    }

    /// The server's reconnect request read since the last call, if any.
    func takeReconnectRequest() -> ServerReconnectRequest? {
        defer { reconnectRequest = nil }
        return reconnectRequest
    }

    /// Bytes one call reads at most (a server cannot keep the send loop reading).
    private static let readBudget = 64 * 1024

    private enum Read {
        /// This many bytes are at the start of ``RTMPSession/incomingBytes``.
        case bytes(Int)
        case wouldBlock
        case closed
        case failed(String)
    }

    /// The bytes librtmp read ahead first, then what the socket (or the TLS session) holds now,
    /// into ``RTMPSession/incomingBytes``. (`m_sb` is read field by field: a copy of it would copy
    /// its 16 KiB buffer too.)
    private func readWithoutWaiting(max: Int) -> Read {
        let size = min(max, incomingBytes.count)
        let readAhead = min(Int(rtmp.pointee.m_sb.sb_size), size)
        if readAhead > 0, let start = rtmp.pointee.m_sb.sb_start {
            incomingBytes.withUnsafeMutableBytes { $0.baseAddress!.copyMemory(from: start, byteCount: readAhead) }
            rtmp.pointee.m_sb.sb_start = start + readAhead
            rtmp.pointee.m_sb.sb_size -= Int32(readAhead)
            return .bytes(readAhead)
        }
        let fd = rtmp.pointee.m_sb.sb_socket
        if let session = rtmp.pointee.m_sb.sb_ssl {
            // GnuTLS reads whole records: on a non-blocking socket an incomplete one gives "again"
            // and stays buffered inside the session until the rest arrives.
            let flags = fcntl(fd, F_GETFL)
            _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
            defer { _ = fcntl(fd, F_SETFL, flags) }
            let result = incomingBytes.withUnsafeMutableBytes { GnuTLS.receive(from: session, into: UnsafeMutableRawBufferPointer(rebasing: $0[..<size])) }
            switch result {
            case .bytes(let n): return .bytes(n)
            case .wouldBlock: return .wouldBlock
            case .closed: return .closed
            case .failed(let why): return .failed(why)
            }
        }
        let n = incomingBytes.withUnsafeMutableBytes { recv(fd, $0.baseAddress, size, Int32(MSG_DONTWAIT)) }
        if n > 0 { return .bytes(n) }
        if n == 0 { return .closed }
        if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return .wouldBlock }
        return .failed(String(cString: strerror(errno)))
    }

    /// Where librtmp's reading stands when ours begins: the server's chunk size and window, the
    /// bytes counted and acknowledged, and the last header on each chunk stream.
    private func takeOverReading() -> ServerMessages {
        let r = rtmp.pointee
        var messages = ServerMessages(chunkSize: Int(r.m_inChunkSize), window: UInt32(clamping: r.m_nServerBW),
                                      bytesIn: UInt64(clamping: r.m_nBytesIn), bytesAcknowledged: UInt64(clamping: r.m_nBytesInSent))
        if let channels = r.m_vecChannelsIn, let timestamps = r.m_channelTimestamp {
            for index in 0..<Int(r.m_channelsAllocatedIn) {
                guard let packet = channels[index] else { continue }
                messages.resume(chunkStreamID: UInt32(index), timestamp: UInt32(bitPattern: timestamps[index]),
                                length: Int(packet.pointee.m_nBodySize), typeID: packet.pointee.m_packetType,
                                streamID: UInt32(bitPattern: packet.pointee.m_nInfoField2))
            }
        }
        return messages
    }
}
