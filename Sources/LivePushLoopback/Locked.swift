import Foundation

/// A value guarded by a lock (the package does not depend on NIOConcurrencyHelpers and
/// `Synchronization.Mutex` needs macOS 15).
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
