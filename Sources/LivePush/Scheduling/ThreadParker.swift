#if canImport(Glibc)
import Glibc
#endif

/// Where one pool thread sleeps until another wakes it or its deadline passes: each thread of
/// the ``PacingScheduler`` and of ``ConnectionWorkers`` parks on one of its own. The pools
/// decide under their `Mutex` which thread to wake and wake it after they let go of the lock,
/// so a woken thread never wakes only to block on the lock.
///
/// An eventfd, waited on with `ppoll`: its timeout runs on the monotonic clock, as the pacing
/// deadlines do. A `DispatchSemaphore` would do the rest, but its timed wait is glibc's
/// `sem_timedwait`, on the wall clock: a clock stepped back (NTP, a resumed VM) would hold every
/// push on a pacing thread for as long as the step.
///
/// A pool wakes a thread only after taking it off its list of parked threads, once per parking
/// (``ParkedThreads``): a thread whose deadline passed while it was being woken takes that
/// wake-up with an untimed ``park(until:)``, so that none is left over for its next sleep.
final class ThreadParker: Sendable {
    /// The eventfd; closed when the last holder (the thread, or a waker on its way) lets go.
    private let descriptor: Int32

    init() {
        descriptor = CSystemCalls.eventfd(0, CSystemCalls.closeOnExec)
        precondition(descriptor >= 0, "eventfd failed: \(errno)")
    }

    deinit {
        close(descriptor)
    }

    /// Wakes the parked thread; one write (a system call), made outside the pool's lock.
    func unpark() {
        var one: UInt64 = 1
        // An eventfd's counter overflows only after 2^64 - 2 wakes without a read.
        _ = write(descriptor, &one, MemoryLayout<UInt64>.size)
    }

    /// Sleeps until ``unpark()`` is called, or the monotonic time (µs) `deadline` passes (never
    /// for nil). Returns true when woken.
    @discardableResult
    func park(until deadline: Int64?) -> Bool {
        guard let deadline else {
            consumeWake()
            return true
        }
        var poll = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while true {
            let left = deadline - monotonicMicroseconds()
            if left <= 0 { return false }
            var timeout = timespec(tv_sec: Int(left / 1_000_000), tv_nsec: Int(left % 1_000_000) * 1000)
            let ready = CSystemCalls.ppoll(&poll, 1, &timeout, nil)
            if ready > 0 {
                consumeWake()
                return true
            }
            // A timeout, or a signal (EINTR): the loop looks at the time again.
            if ready == 0 { return false }
        }
    }

    /// Reads the counter back to zero, blocking until a wake arrives if none has.
    private func consumeWake() {
        var count: UInt64 = 0
        while read(descriptor, &count, MemoryLayout<UInt64>.size) < 0 && errno == EINTR {}
    }
}

/// `eventfd` and `ppoll`, which the Glibc module leaves out (`sys/eventfd.h` is not in it, and
/// `ppoll` is declared only under `_GNU_SOURCE`): looked up once, as `WorkerThread` looks up
/// `pthread_setname_np`.
private enum CSystemCalls {
    typealias EventFD = @convention(c) (UInt32, Int32) -> Int32
    typealias PPoll = @convention(c) (UnsafeMutablePointer<pollfd>?, nfds_t, UnsafePointer<timespec>?, UnsafeRawPointer?) -> Int32

    /// `EFD_CLOEXEC`, which is `O_CLOEXEC`.
    static let closeOnExec = Int32(O_CLOEXEC)
    static let eventfd: EventFD = symbol("eventfd", as: EventFD.self)
    static let ppoll: PPoll = symbol("ppoll", as: PPoll.self)

    private static func symbol<Function>(_ name: String, as type: Function.Type) -> Function {
        guard let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
            preconditionFailure("\(name) is missing from the C library")
        }
        return unsafeBitCast(address, to: type)
    }
}
