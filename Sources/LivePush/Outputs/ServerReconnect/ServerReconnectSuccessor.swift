import Synchronization

/// The connection a server's reconnect request made, published and waiting for the send loop
/// to switch to it; on its way from the connection worker that made it to the one that
/// publishes it (or closes it).
///
/// The session is not `Sendable` and is used by one thread at a time: it comes in as a
/// `sending` value and ``take()`` hands it on as one, as ``PublishingSlot`` does.
final class ServerReconnectSuccessor: Sendable {
    private let session: Mutex<RTMPSession?>

    init(_ session: sending RTMPSession) {
        self.session = Mutex(session)
    }

    /// The session; nil when taken already.
    func take() -> RTMPSession? {
        session.withLock { $0.take() }
    }
}
