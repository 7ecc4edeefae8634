/// Something that happened in an ``RTMPReceiver``.
public enum ReceiverEvent: Sendable {
    /// A client sent `connect` for `app`.
    case connected(app: String, remote: String)
    /// A client started publishing `stream` (the name without a `?query`).
    case publishStarted(app: String, stream: String)
    /// A publish ended (deleteStream / FCUnpublish / closeStream / disconnect / receiver stop);
    /// the recording, if any, is closed.
    case publishEnded(PublishSummary)
    /// A connection closed.
    case disconnected(remote: String)
    /// A protocol violation or I/O problem; the connection concerned is closed (except for
    /// recording errors, after which recording stops but the publish goes on).
    case protocolError(String)
    /// A peer reached a bound of ``RTMPReceiver/Limits``: its connection or request was refused
    /// or closed (see ``ReceiverLimit``).
    case limitReached(ReceiverLimit, remote: String)
}
