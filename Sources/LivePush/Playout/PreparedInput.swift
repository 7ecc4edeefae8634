import Synchronization

/// An entry's input being opened ahead on another thread. A producer whose turn comes first
/// asks ``isReady(whenReady:)`` and is called back; only a thread of its own ever waits in ``take()``.
final class PreparedInput: Sendable {
    private struct State {
        var result: Result<any PlayoutEntryInput, LivePushError>?
        var waiters: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())
    /// Wakes a thread waiting in ``take()``.
    private let opened = ProgressSignal()

    func fulfil(_ result: Result<any PlayoutEntryInput, LivePushError>) {
        let waiting = state.withLock { state in
            state.result = result
            defer { state.waiters = [] }
            return state.waiters
        }
        opened.wake()
        for waiter in waiting { waiter() }
    }

    /// Whether the input is opened (or failed to be); when not, `whenReady` is called once it is.
    func isReady(whenReady: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            if state.result != nil { return true }
            state.waiters.append(whenReady)
            return false
        }
    }

    /// The opened input (or why it could not be), once ready.
    func take() -> Result<any PlayoutEntryInput, LivePushError> {
        opened.wait { state.withLock { $0.result != nil } }
        return state.withLock { $0.result! }
    }
}
