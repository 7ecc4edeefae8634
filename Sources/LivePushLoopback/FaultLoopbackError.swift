/// Errors thrown by ``FaultLoopback`` and ``SRTRelay``.
public enum FaultLoopbackError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The upstream is neither `host:port` nor an rtmp:// URL.
    case invalidUpstream(String)
    /// The SRT relay's upstream is neither `host:port` nor an srt:// URL with a port.
    case invalidSRTUpstream(String)

    public var description: String {
        switch self {
        case .invalidUpstream(let text):
            return "FaultLoopback: invalid upstream '\(text)' (expected HOST:PORT or rtmp://HOST[:PORT]/...)"
        case .invalidSRTUpstream(let text):
            return "SRTRelay: invalid upstream '\(text)' (expected HOST:PORT or srt://HOST:PORT)"
        }
    }
}
