/// An entry's input being opened ahead on another thread; the producer waits for it only if
/// its turn comes first.
final class PreparedInput: @unchecked Sendable {
    private let lock = ConditionLock()
    private var result: Result<ClipInput, LivePushError>?

    func fulfil(_ opened: Result<ClipInput, LivePushError>) {
        lock.withLock {
            result = opened
            lock.broadcast()
        }
    }

    /// The opened input (or why it could not be), once ready.
    func take() -> Result<ClipInput, LivePushError> {
        lock.withLock {
            while result == nil { lock.wait() }
            return result!
        }
    }
}
