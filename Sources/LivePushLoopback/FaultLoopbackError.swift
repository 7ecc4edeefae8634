/// Errors thrown by ``FaultLoopback``.
public enum FaultLoopbackError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The upstream is neither `host:port` nor an rtmp:// URL.
    case invalidUpstream(String)

    public var description: String {
        switch self {
        case .invalidUpstream(let text):
            return "FaultLoopback: invalid upstream '\(text)' (expected HOST:PORT or rtmp://HOST[:PORT]/...)"
        }
    }
}
