/// A fault the ``FaultLoopback`` can inject into a connection.
///
/// TCP-level faults act on the client's socket (and therefore on relayed traffic too); RTMP-level
/// faults are answers the loopback gives itself (a connection with a matching RTMP-level rule is
/// terminated by the loopback even in relay mode and never reaches the upstream server).
public enum Fault: Sendable, Equatable {
    /// Accept the TCP connection and reset it (SO_LINGER 0) before reading a byte. The client's
    /// `connect()` has already succeeded (the kernel completes the TCP handshake), so it sees
    /// ECONNRESET / EOF on its first read or write, not ECONNREFUSED. Only checked on accept.
    case refuse
    /// Reset the connection (SO_LINGER 0 + close → TCP RST). When due at accept, it happens
    /// once the first bytes from the client have been read (unlike ``refuse``).
    case reset
    /// Forward this many client→server bytes (counted from when the rule becomes due), then reset.
    case resetAfterBytes(Int)
    /// Reset this long after the rule becomes due.
    case resetAfter(Duration)
    /// Stop reading from the client and stop forwarding in both directions; the socket stays open.
    case stall
    /// A path that dies silently: reset the client's side now, but keep the relayed connection
    /// to the upstream server open and silent, for this long (nil: until the loopback stops), as a
    /// NAT or load balancer that forgot the flow would. The server keeps the old publisher until
    /// its own idle timeout and answers a reconnect "already publishing". Without an upstream the
    /// loopback's own receiver plays that server: it holds the stream name for the same time.
    case stale(Duration?)
    /// Forward nothing in either direction and close nothing: both sides stay open, and when the
    /// client gives up and closes, the upstream side stays open and silent until the loopback
    /// stops (the server never learns). Without an upstream the receiver holds the stream name
    /// until the loopback stops.
    case blackhole
    /// Let client→server bytes through at this rate at most (reads paced per 100 ms tick).
    case throttle(bytesPerSecond: Int)
    /// Delay every chunk of bytes by this much, in both directions.
    case latency(Duration)
    /// Close (FIN) while the RTMP handshake is in progress: right after the client's first bytes.
    case closeDuringHandshake
    /// Answer `connect` with `_error` / `NetConnection.Connect.Rejected`, then close.
    case rejectConnect
    /// Answer `publish` with an `onStatus` error (`NetStream.Publish.BadName`).
    case rejectPublish(PublishRejection)
    /// Send `NetStream.Publish.Start`, then close the connection.
    case closeAfterPublish
    /// Replace the next command reply (`_result`, `onStatus`...) with undecodable AMF.
    case malformedReply
    /// Send only the first half of the next command reply's bytes, then close.
    case truncatedReply
    /// Once the client has published, send it an Enhanced RTMP v2 `onStatus`
    /// `NetConnection.Connect.ReconnectRequest` (level `status`), with this `tcUrl` when given
    /// (else the client reconnects to the same URL). Sent between two of the server's messages,
    /// in relay mode too: the connection goes on as before, and the client is to publish again
    /// on a new connection and then close this one. Given by ``FaultLoopback/setFaults(_:)``, it
    /// concerns the connections accepted after (the server's messages are followed from the start).
    case reconnectRequest(tcUrl: String?)

    /// True for the faults answered at the RTMP level by the loopback's own session handler.
    public var isRTMPLevel: Bool {
        switch self {
        case .rejectConnect, .rejectPublish, .closeAfterPublish, .malformedReply, .truncatedReply: return true
        default: return false
        }
    }

    /// True for faults that stay in effect once due (stall, throttle, latency) until the rule is
    /// removed with ``FaultLoopback/setFaults(_:)``.
    public var isContinuous: Bool {
        switch self {
        case .stall, .blackhole, .throttle, .latency: return true
        default: return false
        }
    }

    /// The spec syntax (``FaultSpec``) of the fault part, e.g. `throttle=65536`.
    public var specText: String {
        switch self {
        case .refuse: return "refuse"
        case .reset: return "reset"
        case .resetAfterBytes(let n): return "reset-after-bytes=\(n)"
        case .resetAfter(let d): return "reset-after=\(FaultSpec.format(d))"
        case .stall: return "stall"
        case .stale(let d): return d.map { "stale=\(FaultSpec.format($0))" } ?? "stale"
        case .blackhole: return "blackhole"
        case .throttle(let rate): return "throttle=\(rate)"
        case .latency(let d): return "latency=\(FaultSpec.format(d))"
        case .closeDuringHandshake: return "close-handshake"
        case .rejectConnect: return "reject-connect"
        case .rejectPublish(let kind): return "reject-publish=\(kind.rawValue)"
        case .closeAfterPublish: return "close-after-publish"
        case .malformedReply: return "malformed-reply"
        case .truncatedReply: return "truncated-reply"
        case .reconnectRequest(let tcUrl): return tcUrl.map { "reconnect-request=\($0)" } ?? "reconnect-request"
        }
    }
}
