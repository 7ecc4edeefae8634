/// Something that happened in an ``SRTRelay``.
public enum SRTRelayEvent: Sendable, CustomStringConvertible {
    /// A caller's first handshake from a new address (or with a new SRT socket id from a known
    /// one) opened a session; sessions are numbered from 1.
    case sessionStarted(session: Int, caller: String)
    /// A fault took effect on a session (for `refuse`, at the first handshake it dropped).
    case faultInjected(SRTFaultRule, session: Int)
    /// A stall's time is over: the session forwards again.
    case stallEnded(SRTFaultRule, session: Int)
    /// A session ended, and why ("the caller closed the connection", "idle for 10s", ...).
    case sessionEnded(session: Int, reason: String, SRTRelayFigures)

    public var description: String {
        switch self {
        case .sessionStarted(let s, let caller): "session \(s): caller \(caller)"
        case .faultInjected(let rule, let s): "session \(s): fault \(rule)"
        case .stallEnded(let rule, let s): "session \(s): \(rule) over, forwarding again"
        case .sessionEnded(let s, let reason, let figures): "session \(s): ended (\(reason)): \(figures)"
        }
    }
}
