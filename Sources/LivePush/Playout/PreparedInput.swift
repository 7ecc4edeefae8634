/// An entry's input being opened ahead on another thread; the producer waits for it only if
/// its turn comes first.
final class PreparedInput: @unchecked Sendable {
    private let lock = ConditionLock()
    private var result: Result<any PlayoutEntryInput, LivePushError>?

    func fulfil(_ opened: Result<any PlayoutEntryInput, LivePushError>) {
        lock.withLock {
            result = opened
            lock.broadcast()
        }
    }

    /// The opened input (or why it could not be), once ready.
    func take() -> Result<any PlayoutEntryInput, LivePushError> {
        lock.withLock {
            while result == nil { lock.wait() }
            return result!
        }
    }
}
