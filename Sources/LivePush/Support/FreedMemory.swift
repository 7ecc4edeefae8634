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

extension FreedMemory {
    /// Makes glibc serve every block of `threshold` bytes or more with its own mapping, given
    /// back the moment it is freed, for a process whose peers can make it allocate megabytes at
    /// will (`livepush serve`). glibc's default raises that threshold to the largest block freed
    /// so far (up to 32 MiB), and then keeps such blocks in a thread's arena, whose top
    /// `malloc_trim` does not release: after a few 13 MB messages, tens of megabytes stayed.
    package static func mapLargeBlocks(threshold: Int = 256 * 1024) {
        #if os(Linux)
        // Setting either disables glibc's dynamic adjustment of both.
        _ = glibcMallopt(mallocMmapThreshold, Int32(threshold))
        _ = glibcMallopt(mallocTrimThreshold, Int32(threshold * 2))
        #endif
    }
}

#if os(Linux)
/// `M_TRIM_THRESHOLD` and `M_MMAP_THRESHOLD` (<malloc.h>).
private let mallocTrimThreshold: Int32 = -1
private let mallocMmapThreshold: Int32 = -3

/// glibc's `int mallopt(int param, int value)`.
@_silgen_name("mallopt")
private func glibcMallopt(_ param: Int32, _ value: Int32) -> Int32

/// glibc's `int malloc_trim(size_t pad)` (<malloc.h>, which Swift's Glibc module leaves out).
@_silgen_name("malloc_trim")
private func glibcMallocTrim(_ pad: Int) -> Int32
#endif
