import Dispatch
import Synchronization

/// Gives memory that was freed back to the system.
///
/// glibc keeps what a program frees in its heaps for later use; a channel that opens a new
/// decoder and encoder for every entry frees tens of megabytes at each splice, in pieces that
/// a fragmented heap would otherwise keep. Called where a large input was just released
/// (the embedded receiver too, when a connection that may have sent megabytes closes).
package enum FreedMemory {
    /// Set while a trim is scheduled: many releases in a short while (a thousand channels
    /// starting) make one trim.
    private static let scheduled = Atomic<Bool>(false)

    /// Trims on a utility thread, a moment later: walking the heaps takes milliseconds a
    /// real-time splice has not got. Opening an input frees what probing it took (libavformat's
    /// stream analysis decodes a few frames), about a tenth of a channel's memory.
    package static func releaseSoon() {
        guard !scheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .milliseconds(500)) {
            scheduled.store(false, ordering: .releasing)
            release()
        }
    }

    package static func release() {
        #if os(Linux)
        _ = glibcMallocTrim(0)
        #endif
    }
}

#if os(Linux)
/// glibc's `int malloc_trim(size_t pad)` (<malloc.h>, which Swift's Glibc module leaves out).
@_silgen_name("malloc_trim")
private func glibcMallocTrim(_ pad: Int) -> Int32
#endif
