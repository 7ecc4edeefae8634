/// An input whose reads can wait for data (frames or packets an app hands in, a live feed)
/// and whose wait can be ended from another thread: when the push stops, it calls
/// ``MediaInput/interrupt()`` from the thread that stopped it, while the producer may be
/// waiting in ``MediaInput/nextPacket()``.
///
/// `Sendable` says what that needs: `interrupt()` is safe from any thread. An input of your
/// own that waits should conform; one that does not is never interrupted, and a stop then
/// waits for its next packet or its end.
public protocol InterruptibleInput: MediaInput, Sendable {}

extension FrameInput: InterruptibleInput {}
extension PacketInput: InterruptibleInput {}
extension FailoverInput: InterruptibleInput {}
