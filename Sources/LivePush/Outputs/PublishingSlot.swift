import Synchronization

/// A published connection on its way between threads: made by a connection worker, served by
/// a ``SendLoop`` (its per-output record there), and handed back to a worker to be closed.
///
/// The connection itself (``Publishing``, over a librtmp, libsrt or WebRTC session) is not
/// `Sendable`, and is never used by two threads at once: it comes in as a `sending` value,
/// only the holder of the slot's lock touches it, and ``take()`` hands it on as a `sending`
/// value. The lock is never contended (one thread at a time has the slot); it is what lets the
/// compiler check that hand-over, where a comment used to argue it.
final class PublishingSlot: Sendable {
    let output: PushOutput
    private let publishing: Mutex<(any PublishingTurns)?>

    init(_ publishing: sending any PublishingTurns, for output: PushOutput) {
        self.output = output
        self.publishing = Mutex(publishing)
    }

    /// One turn of the send loop (nil once taken: the pump has ended).
    func runTurn(now: Int64) -> PublishingTurn? {
        publishing.withLock { $0?.runTurn(now: now) }
    }

    /// The connection, for its close once the pump has ended; nil when taken already.
    func take() -> (any PublishingTurns)? {
        publishing.withLock { $0.take() }
    }
}
