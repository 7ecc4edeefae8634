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
        /// Signalled once the thread carries its name.
        let named = DispatchSemaphore(value: 0)
        init(name: String, body: @escaping () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Returns once the thread carries its name, so that whoever counts threads by name right
    /// after (the thread budget) sees it: a thread that has not run yet shows its creator's name.
    static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let box = Box(name: name, body: body)
        let retained = Unmanaged.passRetained(box).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            // Visible in /proc, top -H and gdb; Linux keeps 15 characters.
            Thread.current.name = String(box.name.prefix(15))
            box.named.signal()
            box.body()
            return nil
        }, retained)
        precondition(result == 0, "pthread_create failed: \(result)")
        pthread_detach(thread)
        box.named.wait()
    }
}
