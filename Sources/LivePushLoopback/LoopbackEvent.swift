import LivePush

/// Something that happened in a ``FaultLoopback``.
public enum LoopbackEvent: Sendable, CustomStringConvertible {
    /// A TCP connection was accepted; connections are numbered from 1 in accept order.
    case accepted(connection: Int)
    /// A fault took effect on a connection.
    case faultInjected(FaultRule, connection: Int)
    /// Relay mode: the connection to the upstream server is up.
    case upstreamConnected(connection: Int)
    /// Relay mode: the client ended its side gracefully (a FIN). The relay passes the FIN on
    /// after the bytes before it, and the connection lasts until the server ends its side too.
    case clientFinishedSending(connection: Int)
    /// A connection closed, and why ("client closed", "reset by fault refuse@conn=1", ...).
    case closed(connection: Int, reason: String)
    /// Terminating mode: a client started publishing `stream`.
    case publishStarted(app: String, stream: String)
    /// Terminating mode: a publish ended; the recording, if any, is closed.
    case publishEnded(PublishSummary)
    /// Terminating mode: the other receiver events (RTMP connect, disconnect, protocol errors).
    case receiver(ReceiverEvent)

    public var description: String {
        switch self {
        case .accepted(let c): return "connection \(c): accepted"
        case .faultInjected(let rule, let c): return "connection \(c): fault \(rule)"
        case .upstreamConnected(let c): return "connection \(c): upstream connected"
        case .clientFinishedSending(let c): return "connection \(c): client finished sending"
        case .closed(let c, let reason): return "connection \(c): closed (\(reason))"
        case .publishStarted(let app, let stream): return "publish started \(Self.peer(app))/\(Self.peer(stream))"
        case .publishEnded(let s):
            return "publish ended \(Self.peer(s.app))/\(Self.peer(s.stream)) (\(s.endReason)): \(s.videoFrames) video frames, "
                + "\(s.audioFrames) audio frames, \(s.bytes) bytes" + (s.recordingPath.map { ", recorded \(TerminalText.escape($0, limit: 1024))" } ?? "")
        case .receiver(.connected(let app, let remote)): return "rtmp connect app=\(Self.peer(app)) from \(remote)"
        case .receiver(.disconnected(let remote)): return "rtmp disconnected \(remote)"
        case .receiver(.protocolError(let message)): return "protocol error: \(Self.peer(message))"
        case .receiver(.publishStarted(let app, let stream)): return "publish started \(Self.peer(app))/\(Self.peer(stream))"
        case .receiver(.publishEnded(let s)): return "publish ended \(Self.peer(s.app))/\(Self.peer(s.stream)) (\(s.endReason))"
        case .receiver(.limitReached(let limit, let remote)): return "limit \(limit.rawValue) reached by \(remote)"
        }
    }

    /// A peer's string, safe to print (see `TerminalText`).
    public static func peer(_ text: String) -> String { TerminalText.escape(text, limit: 256) }
}
