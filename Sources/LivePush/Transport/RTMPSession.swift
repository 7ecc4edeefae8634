import CRTMP
import LivePushWire
#if canImport(Glibc)
import Glibc
#endif

/// One publishing RTMP connection, the only type that touches librtmp.
///
/// librtmp does the handshake, the chunking and the command bookkeeping; this type adds what
/// it lacks for a dependable publisher: a bounded TCP connect, a send timeout, a verified
/// server for rtmps://, a larger outgoing chunk size, and a reading of the server's replies
/// precise enough to tell a rejected connect from a rejected publish. Not thread-safe: one thread owns a session.
final class RTMPSession {
    struct Options {
        var connectTimeout: Duration = .seconds(5)
        /// Upper bound for each wait on the server (handshake, command replies).
        var receiveTimeout: Duration = .seconds(5)
        /// Upper bound for one blocked write; past it the session fails with `sendDataTimeout`.
        var sendTimeout: Duration = .milliseconds(3000)
        var chunkSize: Int32 = 4096
        var sendBufferBytes: Int?
        var tls = TLSOptions()
        /// When set, the server is asked (Window Acknowledgement Size) to acknowledge every so
        /// many bytes it reads; ``serviceIncoming()`` returns the acknowledgements.
        var acknowledgementWindow: UInt32?
        /// Enhanced RTMP: the FourCCs this connection may send in E-RTMP tags, announced in the
        /// connect command's `fourCcList` (``RTMPConnectCommand``); empty for a legacy stream.
        var fourCcList: [String] = []
    }

    /// What the connect command says LivePush can do with each video FourCC (E-RTMP v2
    /// `videoFourCcInfoMap`): it encodes H.264, HEVC and AV1, and forwards those and VP9.
    static let videoFourCcInfoMap: [(fourCC: String, info: UInt32)] = [
        ("avc1", EnhancedRTMPCapabilities.FourCcInfo.canEncode | EnhancedRTMPCapabilities.FourCcInfo.canForward),
        ("hvc1", EnhancedRTMPCapabilities.FourCcInfo.canEncode | EnhancedRTMPCapabilities.FourCcInfo.canForward),
        ("av01", EnhancedRTMPCapabilities.FourCcInfo.canEncode | EnhancedRTMPCapabilities.FourCcInfo.canForward),
        ("vp09", EnhancedRTMPCapabilities.FourCcInfo.canForward),
    ]
    /// The connect command's `capsEx`: LivePush follows a server's Reconnect Request and sends
    /// multitrack video (a ladder). Not ModEx or nanosecond offsets: it sends neither.
    static let capsEx = EnhancedRTMPCapabilities.CapsEx.reconnect | EnhancedRTMPCapabilities.CapsEx.multitrack

    private enum Channel {
        static let control: Int32 = 0x02
        static let command: Int32 = 0x03
        static let audio: Int32 = 0x04
        static let data: Int32 = 0x05
        static let video: Int32 = 0x06
    }

    let url: PushURL
    private let options: Options
    let rtmp: UnsafeMutablePointer<RTMP>
    /// librtmp keeps pointers into the URL string it parsed; it must outlive `rtmp`.
    private let urlStorage: UnsafeMutablePointer<CChar>
    private var streamID: Int32 = 0
    /// Messages chunked and not yet written: a send turn writes them at once (``flush()``).
    /// Media and control messages both go through it, so what the socket could not take yet
    /// is always followed by what was sent after it, never cut into.
    private var outgoing: [UInt8] = []
    private var chunker: RTMPMediaChunker
    /// `outgoing` is written as soon as it holds this much, so that it stays small per
    /// connection (a thousand channels each keep one).
    private static let outgoingLimit = 64 * 1024
    private(set) var isPublishing = false
    /// What the server's connect `_result` said it takes (an Enhanced RTMP server); nil when it
    /// said nothing of it (a legacy server, or one that takes E-RTMP v1 without saying so).
    private(set) var serverCapabilities: EnhancedRTMPCapabilities?
    /// Bytes written on this connection, counted high: the handshake and commands at a generous
    /// estimate, every message with its largest chunk headers. The server's acknowledgements
    /// count the same bytes exactly, so a position at or below an acknowledgement surely arrived.
    var bytesSent: Int64 = 0
    /// Send-buffer room known without asking the kernel (see ``hasRoom(for:)``).
    private var knownRoom: Int64 = 0
    /// The server's messages once the publish has started (see ``serviceIncoming()``).
    var incoming: ServerMessages?
    /// A reconnect request the server sent, until the output takes it.
    var reconnectRequest: ServerReconnectRequest?
    /// Where the server's bytes are read into: one buffer for the connection's life (a read is
    /// tried every 100 ms on every published output). 4 KiB: a server sends acknowledgements,
    /// pings and the odd status, and a turn reads up to 64 KiB in pieces; each connection of a
    /// thousand channels keeps one.
    var incomingBytes = [UInt8](repeating: 0, count: 4 * 1024)
    /// The CAs an rtmps:// session was verified with. The GnuTLS session librtmp holds refers to
    /// them, so they are released only after `deinit` has closed that session.
    private var tlsCredentials: GnuTLS.Credentials?

    init(url: PushURL, options: Options) throws(LivePushError) {
        Self.configureLibraryOnce
        guard let rtmp = RTMP_Alloc() else { throw LivePushError(.outOfMemory, "RTMP_Alloc") }
        self.url = url
        self.options = options
        self.rtmp = rtmp
        self.urlStorage = strdup(url.rawValue)
        self.chunker = RTMPMediaChunker(chunkSize: Int(RTMP_DEFAULT_CHUNKSIZE))
        RTMP_Init(rtmp)
        guard RTMP_SetupURL(rtmp, urlStorage) != 0 else {
            throw LivePushError(.urlSetupFailed, url.redacted)
        }
        RTMP_EnableWrite(rtmp)
        rtmp.pointee.Link.timeout = Int32(max(1, options.receiveTimeout.milliseconds / 1000))
    }

    deinit {
        close(graceful: false)
        RTMP_Free(rtmp)
        free(urlStorage)
    }

    /// librtmp logs to stderr, URLs with their auth_key included; LivePush reports errors itself.
    /// Writing to a socket the server has reset raises SIGPIPE, which would kill the process.
    private static let configureLibraryOnce: Void = {
        RTMP_LogSetLevel(RTMP_LOGCRIT)
        signal(SIGPIPE, SIG_IGN)
    }()

    // MARK: - Connect and publish

    /// TCP connect, handshake, `connect`, `releaseStream`/`FCPublish`, `createStream`, `publish`.
    /// Returns when the server has answered `NetStream.Publish.Start`.
    func connectAndPublish() throws(LivePushError) {
        let fd = try TCPConnector.connect(
            host: url.host, port: url.port,
            timeouts: .init(connect: options.connectTimeout, receive: options.receiveTimeout, send: options.sendTimeout,
                            sendBufferBytes: options.sendBufferBytes))
        rtmp.pointee.m_sb.sb_socket = fd
        if url.scheme == .rtmps {
            do {
                try startTLS()
            } catch {
                close(graceful: false)
                throw error
            }
        }
        guard connectCommand() else {
            close(graceful: false)
            throw LivePushError(.handshakeFailed, "\(url.host):\(url.port)")
        }
        try sendChunkSize()
        try awaitPublishStart()
        streamID = rtmp.pointee.m_stream_id
        // C0+C1+C2, then connect, releaseStream, FCPublish, createStream, publish and Set Chunk
        // Size: a few hundred bytes plus the app, URL and stream name, some of them twice.
        bytesSent = 3073 + 1024 + 4 * Int64(url.rawValue.utf8.count)
        if let window = options.acknowledgementWindow {
            try sendControl(.windowAcknowledgementSize(window))
        }
        // Keep librtmp from sending FCUnpublish/deleteStream by itself when a write fails:
        // those would block for another send timeout on a stalled socket. `close` sends them
        // on a graceful stop.
        rtmp.pointee.m_stream_id = 0
        isPublishing = true
    }

    /// The handshake, then our `connect` in place of librtmp's, for Enhanced RTMP's
    /// `fourCcList`, `videoFourCcInfoMap` and `capsEx`. librtmp sends a packet given to
    /// `RTMP_Connect1` in place of its own and queues its method, so the `_result` is matched
    /// and the publish goes on as usual. A legacy server ignores the fields it does not know.
    private func connectCommand() -> Bool {
        func text(_ value: AVal) -> String {
            guard let start = value.av_val, value.av_len > 0 else { return "" }
            return String(decoding: UnsafeRawBufferPointer(start: start, count: Int(value.av_len)), as: UTF8.self)
        }
        let command = RTMPConnectCommand(app: text(rtmp.pointee.Link.app), tcUrl: text(rtmp.pointee.Link.tcUrl),
                                         fourCcList: options.fourCcList, videoFourCcInfoMap: Self.videoFourCcInfoMap,
                                         capsEx: Self.capsEx)
        let body = command.body
        let headroom = Int(RTMP_MAX_HEADER_SIZE)
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: headroom + body.count)
        defer { buffer.deallocate() }
        body.withUnsafeBytes { UnsafeMutableRawPointer(buffer + headroom).copyMemory(from: $0.baseAddress!, byteCount: body.count) }
        var packet = RTMPPacket()
        packet.m_nChannel = Channel.command
        packet.m_headerType = UInt8(RTMP_PACKET_SIZE_LARGE)
        packet.m_packetType = UInt8(RTMP_PACKET_TYPE_INVOKE)
        packet.m_body = buffer + headroom
        packet.m_nBodySize = UInt32(body.count)
        guard RTMP_Connect1(rtmp, &packet) != 0 else { return false }
        // librtmp numbers its own connect 1 (`++m_numInvokes`) and the next commands after it;
        // with ours in its place, releaseStream would be numbered 1 too, and its `_result`
        // taken for the connect's.
        rtmp.pointee.m_numInvokes = max(rtmp.pointee.m_numInvokes, 1)
        return true
    }

    /// Runs TLS and the certificate check on the fresh socket, then makes librtmp use that
    /// session instead of starting its own, unverified one: with `sb_ssl` set and the SSL
    /// feature cleared, `RTMP_Connect1` goes straight to the RTMP handshake, every read and write
    /// goes through the session, and `RTMP_Close` ends and frees it.
    private func startTLS() throws(LivePushError) {
        let connection = try TLSConnector.start(fd: rtmp.pointee.m_sb.sb_socket, host: url.host, port: url.port,
                                                options: options.tls, timeout: options.receiveTimeout)
        tlsCredentials = connection.credentials
        rtmp.pointee.m_sb.sb_ssl = connection.session
        rtmp.pointee.Link.protocol &= ~RTMP_FEATURE_SSL
    }

    private func awaitPublishStart() throws(LivePushError) {
        var connectAccepted = false
        let deadline = ContinuousClock.now + options.receiveTimeout * 2
        while rtmp.pointee.m_bPlaying == 0 {
            guard ContinuousClock.now < deadline else {
                close(graceful: false)
                throw LivePushError(.startPushTimeout, "no NetStream.Publish.Start from the server")
            }
            var packet = RTMPPacket()
            guard RTMP_ReadPacket(rtmp, &packet) != 0 else {
                let timedOut = RTMP_IsTimedout(rtmp) != 0
                RTMPPacket_Free(&packet)
                close(graceful: false)
                if timedOut { throw LivePushError(.startPushTimeout, "the server did not answer") }
                throw LivePushError(connectAccepted ? .publishRejected : .connectRejected, "the server closed the connection")
            }
            guard packet.m_nBytesRead == packet.m_nBodySize else { continue }
            defer { RTMPPacket_Free(&packet) }
            if let reply = ServerReply(packet) {
                if reply.isConnectResult && !connectAccepted {
                    connectAccepted = true
                    serverCapabilities = reply.capabilities
                }
                if let error = reply.error(connectAccepted: connectAccepted) {
                    close(graceful: false)
                    throw error
                }
            }
            _ = RTMP_ClientPacket(rtmp, &packet)
            if !isConnected {
                throw LivePushError(connectAccepted ? .publishRejected : .connectRejected, "the server closed the session")
            }
        }
    }

    private func sendChunkSize() throws(LivePushError) {
        let size = options.chunkSize
        try sendControl(.setChunkSize(UInt32(size)))
        rtmp.pointee.m_outChunkSize = size
        chunker.chunkSize = Int(size)
    }

    /// A protocol control message (the wire module builds its body), behind what is queued.
    func sendControl(_ message: RTMPMessage) throws(LivePushError) {
        guard isConnected else { throw LivePushError(.connectionLost, "the connection is closed") }
        chunker.append(chunkStreamID: Int(Channel.control), typeID: message.typeID, timestamp: 0, streamID: 0,
                       prefix: .none, payload: message.payload, into: &outgoing)
        try flush()
    }

    /// What `message` adds to ``bytesSent``: the most the chunker writes for it (a full header
    /// with an extended timestamp, and 5 bytes for every further chunk), whatever it writes.
    func wireBytes(of message: FLVMessage) -> Int64 {
        Int64(chunker.maximumBytes(bodySize: message.bodySize))
    }

    // MARK: - Media

    var isConnected: Bool { RTMP_IsConnected(rtmp) != 0 }

    /// Queues one FLV tag body as an RTMP message on the published stream; it is written at the
    /// next ``flush()`` (or at once when the queued bytes reach `outgoingLimit`).
    func send(_ message: FLVMessage) throws(LivePushError) {
        guard isConnected else { throw LivePushError(.connectionLost, "the connection is closed") }
        let bytes = wireBytes(of: message)
        bytesSent += bytes
        knownRoom -= bytes + Self.bookkeepingPerWrite
        let channel = switch message.type {
        case .audio: Channel.audio
        case .video: Channel.video
        case .script: Channel.data
        }
        chunker.append(chunkStreamID: Int(channel), typeID: message.type.rawValue, timestamp: message.timestampMs,
                       streamID: UInt32(bitPattern: streamID), prefix: message.header, payload: message.payload, into: &outgoing)
        if isTLS || outgoing.count >= Self.outgoingLimit { try flush() }
    }

    /// Whether bytes wait in `outgoing` (the socket did not take them all at the last flush).
    var hasUnwrittenBytes: Bool { !outgoing.isEmpty }

    /// GnuTLS must be handed a record it could not write again, whole; over TLS each message is
    /// written as it comes, blocking at most for the send timeout (after ``hasRoom(for:)``).
    private var isTLS: Bool { rtmp.pointee.m_sb.sb_ssl != nil }

    /// Writes what is queued, in one system call when the socket takes it all; true when
    /// nothing is left. Over plain TCP it never blocks: what the socket does not take now stays
    /// queued for the next turn (a shared send loop must not wait on one slow destination).
    /// Over TLS it writes everything, blocking at most for the send timeout (`SO_SNDTIMEO`).
    @discardableResult
    func flush() throws(LivePushError) -> Bool {
        guard !outgoing.isEmpty else { return true }
        let tls = isTLS
        let socket = rtmp.pointee.m_sb.sb_socket
        var written = 0
        defer {
            if written == outgoing.count {
                outgoing.removeAll(keepingCapacity: outgoing.capacity <= Self.outgoingLimit + 8 * 1024)
            } else if written > 0 {
                outgoing.removeSubrange(0..<written)
            }
        }
        while written < outgoing.count {
            errno = 0
            let result = outgoing.withUnsafeBytes { bytes -> Int in
                let start = bytes.baseAddress! + written
                let count = bytes.count - written
                if tls { return Int(RTMPSockBuf_Send(&rtmp.pointee.m_sb, start.assumingMemoryBound(to: CChar.self), Int32(count))) }
                return Glibc.send(socket, start, count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
            }
            if result > 0 {
                written += result
                continue
            }
            let code = errno
            if result < 0 && code == EINTR { continue }
            if !tls && result < 0 && (code == EAGAIN || code == EWOULDBLOCK) { return false }
            close(graceful: false)
            if code == EAGAIN || code == EWOULDBLOCK {
                throw LivePushError(.sendDataTimeout, "no data could be written for \(options.sendTimeout.milliseconds) ms")
            }
            throw LivePushError(.connectionLost, code == 0 ? "send failed" : String(cString: strerror(code)))
        }
        return true
    }

    /// Whether writing `bytes` now does not block. The kernel takes data while what it holds
    /// for the socket (`SO_MEMINFO`: queued buffers with their bookkeeping) is under what it
    /// reserved (`SO_SNDBUF`), and copies a whole segment at a time (up to 64 KiB with segment
    /// offload, which Linux uses on loopback and nearly every NIC): a write may overshoot the
    /// reserve by one segment. The margin allowed here is a quarter of that. An empty buffer
    /// takes any message; one larger than the buffer may then block until the rest drains.
    ///
    /// Reading the counters is a system call, which per frame cost as much as the write itself:
    /// the room last read, less what was written since (with the kernel's bookkeeping per write
    /// over-estimated), answers without one until it runs out.
    func hasRoom(for bytes: Int64) -> Bool {
        if bytes + Self.bookkeepingPerWrite <= knownRoom { return true }
        guard isConnected, let memory = sendBufferMemory else { return true }  // the write fails at once
        // What is queued here is not in the kernel's count yet.
        let free = memory.reserved - memory.queued - Int64(outgoing.count)
        knownRoom = max(0, free)
        return (memory.queued == 0 && outgoing.isEmpty) || (free > 0 && bytes <= free + 16 * 1024)
    }

    /// Waits until the socket can take more, or `timeout` passes (`poll`).
    func waitUntilWritable(timeout: Duration) {
        var pfd = pollfd(fd: rtmp.pointee.m_sb.sb_socket, events: Int16(POLLOUT), revents: 0)
        _ = poll(&pfd, 1, Int32(max(1, timeout.milliseconds)))
    }

    /// What the kernel charges a write beyond its bytes, at most (a socket buffer's head).
    private static let bookkeepingPerWrite: Int64 = 2048

    /// The send buffer in the kernel's terms: `reserved` (`SO_SNDBUF`) and `queued`
    /// (`SK_MEMINFO_WMEM_QUEUED`: written, not yet acknowledged by the peer, with bookkeeping).
    var sendBufferMemory: (reserved: Int64, queued: Int64)? {
        // SO_MEMINFO (55) fills SK_MEMINFO_VARS (9) counters: SNDBUF is the fourth, WMEM_QUEUED the sixth.
        var counters: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0, 0, 0, 0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: counters))
        guard getsockopt(rtmp.pointee.m_sb.sb_socket, SOL_SOCKET, 55, &counters, &length) == 0, length >= 24 else { return nil }
        return (Int64(counters.3), Int64(counters.5))
    }

    /// Ends the session. A graceful close tells the server the stream ended (FCUnpublish,
    /// deleteStream) so that it finalises its recording at once, then ends our side of the
    /// connection and reads what the server still sends until it closes too (at most
    /// `lingering`). Closing with unread bytes would send a reset, and a server that gets a reset
    /// discards what it had not read yet: the end of the stream. Acknowledgements keep coming
    /// until the server has read everything, so there usually are such bytes.
    func close(graceful: Bool, lingering: Duration = .seconds(2)) {
        // librtmp writes the closing commands itself: only behind a stream written whole.
        let flushed = graceful && isPublishing && isConnected && ((try? flush()) ?? false)
        let gracefully = flushed && isPublishing && isConnected
        if gracefully { rtmp.pointee.m_stream_id = streamID }
        isPublishing = false
        // librtmp closes its descriptor; a duplicate keeps the connection for the lingering read.
        let kept = gracefully ? dup(rtmp.pointee.m_sb.sb_socket) : -1
        if isConnected || rtmp.pointee.m_stream_id != 0 { RTMP_Close(rtmp) }
        guard kept >= 0 else { return }
        defer { Glibc.close(kept) }
        shutdown(kept, Int32(SHUT_WR))
        let deadline = monotonicMicroseconds() + lingering.nanoseconds / 1000
        var discard = [UInt8](repeating: 0, count: 4096)
        while true {
            let left = deadline - monotonicMicroseconds()
            var pfd = pollfd(fd: kept, events: Int16(POLLIN), revents: 0)
            guard left > 0, poll(&pfd, 1, Int32(left / 1000) + 1) > 0 else { return }
            guard recv(kept, &discard, discard.count, 0) > 0 else { return }
        }
    }
}
