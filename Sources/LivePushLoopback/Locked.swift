import Synchronization

/// A value guarded by a lock, as a class so that it can be shared by reference.
final class Locked<Value>: Sendable {
    private let mutex: Mutex<UncheckedValue>

    init(_ value: Value) { mutex = Mutex(UncheckedValue(value: value)) }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        try mutex.withLock { try body(&$0.value) }
    }

    /// The lock is what makes the value safe to share.
    private struct UncheckedValue: @unchecked Sendable {
        var value: Value
    }
}
