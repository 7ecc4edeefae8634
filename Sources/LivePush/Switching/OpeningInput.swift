import Synchronization

/// An input being opened where no pacing thread waits for it: a file's open, its probe, its
/// decoders and encoders take tens of milliseconds, and seconds on a slow disk or a pipe. The
/// opening runs on the bounded opening pool (``ConnectionWorkers/opening``); the producer looks
/// with ``take()`` and, when it has nothing else to play, asks to be woken
/// (``isReady(whenReady:)``). A break's fills and a playout channel's entries open this way.
///
/// The opened input is the producer's alone. It is made inside ``slot``'s lock, so the
/// compiler checks the hand-over: a value moved into a `Mutex` from outside it would have to
/// be marked unchecked. The opening holds that lock while it opens, which no one else waits
/// for: ``take()`` looks only once ``flags`` say it is done, and never waits for the lock.
final class OpeningInput: Sendable {
    private struct Flags {
        var done = false
        var waiter: (@Sendable () -> Void)?
    }

    private let slot: Mutex<Result<any MediaInput, LivePushError>?>
    private let flags: Mutex<Flags>

    /// Opened already (or failed to be), or, with nil, by ``open(with:)`` later.
    init(_ result: sending Result<any MediaInput, LivePushError>? = nil) {
        flags = Mutex(Flags(done: result != nil))
        slot = Mutex(result)
    }

    /// Opens with `open` on the opening pool.
    static func start(_ open: @escaping @Sendable () throws(LivePushError) -> sending any MediaInput) -> OpeningInput {
        let opening = OpeningInput()
        ConnectionWorkers.opening.run { opening.open(with: open) }
        return opening
    }

    /// Opens the input with `open` on the calling thread (a worker's, a test's); the producer
    /// waiting for it, if any, is woken.
    func open(with open: @Sendable () throws(LivePushError) -> sending any MediaInput) {
        slot.withLock { slot in
            do throws(LivePushError) {
                slot = .success(try open())
            } catch {
                slot = .failure(error)
            }
        }
        let waiter = flags.withLock { flags in
            flags.done = true
            defer { flags.waiter = nil }
            return flags.waiter
        }
        waiter?()
    }

    /// Whether the input is open (or failed to be); when not, `whenReady` is called (on the
    /// opening thread) once it is.
    func isReady(whenReady: @escaping @Sendable () -> Void) -> Bool {
        flags.withLock { flags in
            if flags.done { return true }
            flags.waiter = whenReady
            return false
        }
    }

    /// The opened input (or why it could not be), handed over once; nil while it is opening.
    func take() -> sending Result<any MediaInput, LivePushError>? {
        guard flags.withLock({ $0.done }) else { return nil }
        // Done: the opening has let go of the lock, so this never waits.
        return slot.withLockIfAvailable { slot -> sending Result<any MediaInput, LivePushError>? in slot.take() } ?? nil
    }
}
