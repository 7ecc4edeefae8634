import CFFmpeg
import Synchronization

/// libavformat's interrupt callback for a network source (BGM, an effect, a live input):
/// aborts blocking I/O when its reader is stopped, or when a network read makes no progress
/// before its deadline (the download or input timeout). libavformat polls it while it waits
/// on a socket.
final class IOInterrupt: Sendable {
    private let deadline = Atomic<Int64>(.max)
    private let cancelled = Atomic<Bool>(false)
    private let expired = Atomic<Bool>(false)

    /// Gives the next blocking call until now + `micros`.
    func arm(micros: Int64) {
        deadline.store(monotonicMicroseconds() + micros, ordering: .relaxed)
    }

    func disarm() { deadline.store(.max, ordering: .relaxed) }

    func cancel() { cancelled.store(true, ordering: .relaxed) }

    var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    /// Whether a deadline ever passed. Sticky: libavformat keeps an interrupted read's error
    /// and may report it from a later call (after a truncated packet), so the cause must survive.
    var didExpire: Bool { expired.load(ordering: .relaxed) }

    fileprivate func shouldInterrupt() -> Bool {
        if cancelled.load(ordering: .relaxed) { return true }
        if monotonicMicroseconds() > deadline.load(ordering: .relaxed) {
            expired.store(true, ordering: .relaxed)
            return true
        }
        return false
    }

    /// The callback for `AVFormatContext.interrupt_callback`; valid while this object lives
    /// (the decoder that installs it keeps it).
    var callback: AVIOInterruptCB {
        AVIOInterruptCB(callback: { opaque in
            guard let opaque else { return 0 }
            return Unmanaged<IOInterrupt>.fromOpaque(opaque).takeUnretainedValue().shouldInterrupt() ? 1 : 0
        }, opaque: Unmanaged.passUnretained(self).toOpaque())
    }
}
