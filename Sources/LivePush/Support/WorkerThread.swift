import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Starts a named OS thread for blocking work (demuxing, librtmp I/O). Every thread LivePush
/// starts itself is one of these, named `livepush.<role>` (see the thread budget, Threads in docs/how-it-works.md).
enum WorkerThread {
    /// The size of a pool whose threads do CPU work or wait on time (pacing, sending,
    /// detecting): one per core, two at least, so that one busy turn never holds up the rest.
    static let onePerCore = max(2, ProcessInfo.processInfo.activeProcessorCount)

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

    /// `body` is `sending`: what it captures moves to the new thread, and the caller keeps no
    /// use of it. Returns once the thread carries its name, so that whoever counts threads by name right
    /// after (the thread budget) sees it: a thread that has not run yet shows its creator's name.
    static func start(name: String, _ body: sending @escaping () -> Void) {
        let box = Box(name: name, body: body)
        let retained = Unmanaged.passRetained(box).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            // Visible in /proc, top -H and gdb; Linux keeps 15 characters.
            setThreadName(String(box.name.prefix(15)))
            box.named.signal()
            box.body()
            return nil
        }, retained)
        precondition(result == 0, "pthread_create failed: \(result)")
        pthread_detach(thread)
        box.named.wait()
    }
}

/// `pthread_setname_np` is declared only under `_GNU_SOURCE`, which the Glibc module does not
/// define; it is looked up once instead (Foundation's `Thread`, which wraps it, is not linked).
private func setThreadName(_ name: String) {
    typealias SetName = @convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pthread_setname_np") else { return }
    _ = unsafeBitCast(symbol, to: SetName.self)(pthread_self(), name)
}
