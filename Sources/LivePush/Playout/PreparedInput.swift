/// An entry's input being opened ahead on another thread. A producer whose turn comes first
/// asks ``isReady(whenReady:)`` and is called back; only a thread of its own ever waits in ``take()``.
final class PreparedInput: @unchecked Sendable {
    private let lock = ConditionLock()
    private var result: Result<any PlayoutEntryInput, LivePushError>?
    private var waiters: [@Sendable () -> Void] = []

    func fulfil(_ opened: Result<any PlayoutEntryInput, LivePushError>) {
        let waiting = lock.withLock {
            result = opened
            lock.broadcast()
            defer { waiters = [] }
            return waiters
        }
        for waiter in waiting { waiter() }
    }

    /// Whether the input is opened (or failed to be); when not, `whenReady` is called once it is.
    func isReady(whenReady: @escaping @Sendable () -> Void) -> Bool {
        lock.withLock {
            if result != nil { return true }
            waiters.append(whenReady)
            return false
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
