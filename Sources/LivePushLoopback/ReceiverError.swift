/// Errors thrown by ``RTMPReceiver``.
public enum ReceiverError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `start()` was called twice, or after `stop()`.
    case alreadyStarted
    /// `waitForPublishEnd` ran out of time.
    case timeout(stream: String)
    /// The receiver stopped before the awaited publish ended.
    case stopped

    public var description: String {
        switch self {
        case .alreadyStarted: return "RTMPReceiver: already started"
        case .timeout(let stream): return "RTMPReceiver: timed out waiting for the end of publish '\(stream)'"
        case .stopped: return "RTMPReceiver: stopped"
        }
    }
}
