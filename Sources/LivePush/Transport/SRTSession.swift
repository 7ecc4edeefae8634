import CSRT
#if canImport(Glibc)
import Glibc
#endif

/// One SRT connection in live mode, through libsrt: the thin layer that touches its socket.
///
/// Connecting blocks (on a connection worker, as an RTMP connect does); once connected the
/// socket is made non-blocking, and ``send(_:)`` hands SRT one message of up to
/// ``SRTURLOptions/payloadSize`` bytes at a time, as far as its send buffer takes them. SRT
/// paces, retransmits and drops too-late packets itself; what it cannot take stays with the
/// caller (``SRTConnection``), so that a slow path backs up into the output's own queue.
///
/// libsrt starts two threads per local UDP port (its send and receive queues) and one
/// collector for the process: each SRT output costs two threads while it is connected.
final class SRTSession {
    struct Options {
        var connectTimeout: Duration = .seconds(5)
        /// No acknowledgement from the peer for this long breaks the connection.
        var peerIdleTimeout: Duration = .seconds(5)
    }

    let url: PushURL
    let srtOptions: SRTURLOptions
    private var socket: SRTSOCKET = SRT_INVALID_SOCK
    private var listener: SRTSOCKET = SRT_INVALID_SOCK
    /// Bytes SRT took, in messages.
    private(set) var bytesSent: Int64 = 0

    /// libsrt's process-wide start-up, done once.
    private static let started: Bool = srt_startup() >= 0

    init(url: PushURL, options: Options) throws(LivePushError) {
        guard let srtOptions = url.srtOptions else { throw LivePushError(.invalidURL, "not an srt:// URL: \(url.redacted)") }
        guard Self.started else { throw LivePushError(.rtmpStartFailed, "libsrt could not start: \(Self.lastError)") }
        self.url = url
        self.srtOptions = srtOptions
        try connect(options)
    }

    deinit { close() }

    // MARK: - Connecting

    private func connect(_ options: Options) throws(LivePushError) {
        let address = try Self.resolve(host: url.host, port: url.port, passive: srtOptions.mode == .listener)
        let candidate = srt_create_socket()
        guard candidate != SRT_INVALID_SOCK else { throw LivePushError(.connectFailed, "srt_create_socket: \(Self.lastError)") }
        var keep = false
        defer { if !keep { srt_close(candidate) } }
        try configure(candidate, options)
        switch srtOptions.mode {
        case .caller:
            try Self.check(address.withSockaddr { srt_connect(candidate, $0, $1) }, socket: candidate, "\(url.host):\(url.port)")
            socket = candidate
        case .rendezvous:
            let local = try Self.resolve(host: "", port: url.port, passive: true, family: address.family)
            try Self.check(address.withSockaddr { remote, remoteLength in
                local.withSockaddr { srt_rendezvous(candidate, $0, $1, remote, remoteLength) }
            }, socket: candidate, "\(url.host):\(url.port)")
            socket = candidate
        case .listener:
            try Self.check(address.withSockaddr { srt_bind(candidate, $0, $1) }, socket: candidate, "bind :\(url.port)")
            try Self.check(srt_listen(candidate, 1), socket: candidate, "listen :\(url.port)")
            listener = candidate
            socket = try accept(on: candidate, timeout: options.connectTimeout)
        }
        keep = true
        var no: Int32 = 0
        _ = srt_setsockflag(socket, SRTO_SNDSYN, &no, Int32(MemoryLayout<Int32>.size))
    }

    /// A listener waits for its caller for at most the connect timeout; the output's reconnect
    /// policy then tries again (and a stop ends the wait between two tries).
    private func accept(on listener: SRTSOCKET, timeout: Duration) throws(LivePushError) -> SRTSOCKET {
        let poll = srt_epoll_create()
        defer { srt_epoll_release(poll) }
        var events = Int32(SRT_EPOLL_IN.rawValue | SRT_EPOLL_ERR.rawValue)
        _ = srt_epoll_add_usock(poll, listener, &events)
        var ready = [SRTSOCKET](repeating: SRT_INVALID_SOCK, count: 1)
        var count: Int32 = 1
        guard srt_epoll_wait(poll, &ready, &count, nil, nil, timeout.milliseconds, nil, nil, nil, nil) > 0 else {
            throw LivePushError(.connectFailed, "no SRT caller on :\(url.port) within \(timeout.milliseconds) ms")
        }
        let accepted = srt_accept(listener, nil, nil)
        guard accepted != SRT_INVALID_SOCK else { throw Self.error(socket: listener, "accept :\(url.port)") }
        return accepted
    }

    private func configure(_ candidate: SRTSOCKET, _ options: Options) throws(LivePushError) {
        func set(_ option: SRT_SOCKOPT, _ value: Int32, _ name: String) throws(LivePushError) {
            var value = value
            guard srt_setsockflag(candidate, option, &value, Int32(MemoryLayout<Int32>.size)) == 0 else {
                throw LivePushError(.invalidURL, "srt:// \(name): \(Self.lastError)")
            }
        }
        func set(_ option: SRT_SOCKOPT, _ text: String, _ name: String) throws(LivePushError) {
            let result = text.withCString { srt_setsockflag(candidate, option, $0, Int32(strlen($0))) }
            guard result == 0 else { throw LivePushError(.invalidURL, "srt:// \(name): \(Self.lastError)") }
        }
        try set(SRTO_TRANSTYPE, Int32(SRTT_LIVE.rawValue), "transtype")
        try set(SRTO_SENDER, 1, "sender")
        try set(SRTO_PAYLOADSIZE, Int32(srtOptions.payloadSize), "payload_size")
        let connectTimeout = srtOptions.connectTimeout.map(Int64.init) ?? options.connectTimeout.milliseconds
        try set(SRTO_CONNTIMEO, Int32(clamping: connectTimeout), "connect_timeout")
        try set(SRTO_PEERIDLETIMEO, Int32(clamping: options.peerIdleTimeout.milliseconds), "peer idle timeout")
        if let latency = srtOptions.latency { try set(SRTO_LATENCY, Int32(clamping: latency / 1000), "latency") }
        if let latency = srtOptions.receiveLatency { try set(SRTO_RCVLATENCY, Int32(clamping: latency / 1000), "rcvlatency") }
        if let latency = srtOptions.peerLatency { try set(SRTO_PEERLATENCY, Int32(clamping: latency / 1000), "peerlatency") }
        if let keyLength = srtOptions.keyLength { try set(SRTO_PBKEYLEN, Int32(keyLength), "pbkeylen") }
        if let passphrase = srtOptions.passphrase { try set(SRTO_PASSPHRASE, passphrase, "passphrase") }
        if let streamID = srtOptions.streamID { try set(SRTO_STREAMID, streamID, "streamid") }
        if let bandwidth = srtOptions.maxBandwidth {
            var value = bandwidth
            _ = srt_setsockflag(candidate, SRTO_MAXBW, &value, Int32(MemoryLayout<Int64>.size))
        }
        if srtOptions.mode == .listener { try set(SRTO_REUSEADDR, 1, "reuseaddr") }
    }

    // MARK: - Sending

    /// Hands SRT one message (at most the payload size). False when its send buffer is full:
    /// nothing was taken, try again later.
    func send(_ message: UnsafeRawBufferPointer) throws(LivePushError) -> Bool {
        let result = srt_sendmsg2(socket, message.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(message.count), nil)
        if result >= 0 {
            bytesSent += Int64(result)
            return true
        }
        if srt_getlasterror(nil) == SRT_EASYNCSND.rawValue { return false }
        throw Self.error(socket: socket, "send")
    }

    /// SRT's view of the link, from its counters.
    var linkStats: SRTLinkStats? {
        var perf = SRT_TRACEBSTATS()
        guard srt_bstats(socket, &perf, 0) == 0 else { return nil }
        return SRTLinkStats(roundTripMs: perf.msRTT, packetsSent: perf.pktSentTotal, packetsLost: Int64(perf.pktSndLossTotal),
                            packetsRetransmitted: Int64(perf.pktRetransTotal), packetsDropped: Int64(perf.pktSndDropTotal),
                            bandwidthMbps: perf.mbpsBandwidth, sendBufferMs: Int(perf.msSndBuf))
    }

    /// Throws when SRT has found the connection broken (no answer for the peer idle timeout,
    /// or the peer closed it).
    func checkConnected() throws(LivePushError) {
        switch srt_getsockstate(socket) {
        case SRTS_CONNECTED: return
        case SRTS_BROKEN: throw LivePushError(.connectionLost, "the SRT peer stopped answering or closed the connection")
        default: throw LivePushError(.connectionLost, "the SRT connection is closed")
        }
    }

    /// How long a graceful close pads after the media (µs): the receiver's latency and half as
    /// much again, 100 ms at least, 3 s at most (a stop stays prompt whatever latency was asked).
    static func deliveryWait(latencyMs: Int64) -> Int64 {
        min(latencyMs * 1000 + max(latencyMs * 500, 100_000), 3_000_000)
    }

    /// Packets SRT holds unacknowledged. Not the milliseconds they span: one packet spans 0 ms.
    private var unacknowledgedPackets: Int32 {
        var perf = SRT_TRACEBSTATS()
        guard srt_bstats(socket, &perf, 0) == 0 else { return 0 }
        return perf.pktSndBuf
    }

    /// Ends the connection. A graceful close sends `padding` (a message the receiver ignores)
    /// every 20 ms for ``deliveryWait(latencyMs:)`` after the media, lets SRT deliver it (at most
    /// `lingering`) and waits the latency once more: SRT has no "end of stream" message, and
    /// what goes wrong at a live stream's end then happens to the padding.
    /// A receiver stops handing on what it holds back for its latency as soon as it sees the
    /// close (without any wait, the last 160 ms of a stream were lost against srt-live-transmit),
    /// and with 10 % loss on the path srt-live-transmit still lost the last one or two messages
    /// in about one run in six when the close waited only, even for 3 s.
    func close(lingering: Duration = .zero, padding: [UInt8] = []) {
        if socket != SRT_INVALID_SOCK, lingering > .zero {
            var latency: Int32 = 0
            var size = Int32(MemoryLayout<Int32>.size)
            if srt_getsockflag(socket, SRTO_PEERLATENCY, &latency, &size) != 0 { latency = 120 }
            let paddingEnd = monotonicMicroseconds() + Self.deliveryWait(latencyMs: Int64(latency))
            while !padding.isEmpty, srt_getsockstate(socket) == SRTS_CONNECTED, monotonicMicroseconds() < paddingEnd {
                // Dropped without a report: the media went out already. A message SRT cannot
                // take (its buffer full) is only one padding message fewer, and a broken socket
                // ends this loop at its state check.
                _ = padding.withUnsafeBytes { try? send($0) }
                usleep(20_000)
            }
            let deadline = monotonicMicroseconds() + lingering.nanoseconds / 1000
            while srt_getsockstate(socket) == SRTS_CONNECTED, unacknowledgedPackets > 0, monotonicMicroseconds() < deadline {
                usleep(10_000)
            }
            // What arrived last is handed on one latency after it was sent.
            if srt_getsockstate(socket) == SRTS_CONNECTED { usleep(UInt32(clamping: min(Int64(latency) * 1000 + 40_000, 2_000_000))) }
        }
        if socket != SRT_INVALID_SOCK { srt_close(socket) }
        if listener != SRT_INVALID_SOCK { srt_close(listener) }
        socket = SRT_INVALID_SOCK
        listener = SRT_INVALID_SOCK
    }

    // MARK: - Errors and addresses

    private static var lastError: String { String(cString: srt_getlasterror_str()) }

    private static func check(_ result: Int32, socket: SRTSOCKET, _ what: String) throws(LivePushError) {
        if result == SRT_ERROR { throw error(socket: socket, what) }
    }

    /// The coded error for SRT's last failure on `socket`: a rejection says why (a wrong
    /// passphrase, a stream id the listener refused), a timeout is a peer that never answered.
    private static func error(socket: SRTSOCKET, _ what: String) -> LivePushError {
        let code = srt_getlasterror(nil)
        let message = lastError
        switch code {
        case SRT_ECONNREJ.rawValue:
            let reason = srt_getrejectreason(socket)
            let text = String(cString: srt_rejectreason_str(reason))
            if reason == Int32(SRT_REJ_TIMEOUT.rawValue) { return LivePushError(.connectFailed, "\(what): no SRT answer (\(text))") }
            return LivePushError(.connectRejected, "\(what): the SRT peer rejected the connection (\(text))")
        case SRT_ENOSERVER.rawValue:
            return LivePushError(.connectFailed, "\(what): no SRT answer (\(message))")
        case SRT_ECONNLOST.rawValue, SRT_EINVSOCK.rawValue:
            return LivePushError(.connectionLost, "\(what): \(message)")
        default:
            return LivePushError(.connectFailed, "\(what): \(message)")
        }
    }

    private struct Address {
        var storage = sockaddr_storage()
        var length: socklen_t = 0
        var family: Int32 { Int32(storage.ss_family) }

        func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>, Int32) -> T) -> T {
            withUnsafePointer(to: storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, Int32(length)) } }
        }
    }

    private static func resolve(host: String, port: Int, passive: Bool, family: Int32 = AF_UNSPEC) throws(LivePushError) -> Address {
        var hints = addrinfo()
        hints.ai_family = family == AF_UNSPEC && host.isEmpty ? AF_INET : family
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        hints.ai_flags = passive ? AI_PASSIVE : 0
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host.isEmpty ? nil : host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw LivePushError(.hostNotFound, "\(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var address = Address()
        address.length = first.pointee.ai_addrlen
        withUnsafeMutableBytes(of: &address.storage) { storage in
            storage.copyMemory(from: UnsafeRawBufferPointer(start: first.pointee.ai_addr, count: Int(first.pointee.ai_addrlen)))
        }
        return address
    }
}

/// SRT's own figures for a connection (``OutputStats/srt``): they feed the output's network
/// quality and `/metrics`.
public struct SRTLinkStats: Sendable, Equatable {
    /// Round-trip time, milliseconds.
    public var roundTripMs: Double
    /// Data packets sent.
    public var packetsSent: Int64
    /// Packets the peer reported lost (each retransmitted, if still in time).
    public var packetsLost: Int64
    /// Packets sent again.
    public var packetsRetransmitted: Int64
    /// Packets SRT dropped because they were too late to be played.
    public var packetsDropped: Int64
    /// SRT's estimate of the link's bandwidth, Mbit/s.
    public var bandwidthMbps: Double
    /// Media SRT holds unacknowledged, ms.
    public var sendBufferMs: Int
}
