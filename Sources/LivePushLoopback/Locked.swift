import Synchronization

/// A value guarded by a lock, as a class so that it can be shared by reference.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        try mutex.withLock { value in try body(&value) }
    }
}
