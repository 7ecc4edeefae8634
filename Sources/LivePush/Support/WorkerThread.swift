import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Starts a named OS thread for blocking work (demuxing, librtmp I/O). Every thread LivePush
/// starts itself is one of these, named `livepush.<role>` (see the README's thread budget).
enum WorkerThread {
    private final class Box {
        let name: String
        let body: () -> Void
        init(name: String, body: @escaping () -> Void) {
            self.name = name
            self.body = body
        }
    }

    static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Box(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            // Visible in /proc, top -H and gdb; Linux keeps 15 characters.
            Thread.current.name = String(box.name.prefix(15))
            box.body()
            return nil
        }, box)
        precondition(result == 0, "pthread_create failed: \(result)")
        pthread_detach(thread)
    }
}
