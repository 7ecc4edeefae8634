import Dispatch

/// Gives memory that was freed back to the system.
///
/// glibc keeps what a program frees in its heaps for later use; a channel that opens a new
/// decoder and encoder for every entry frees tens of megabytes at each splice, in pieces that
/// a fragmented heap would otherwise keep. Called where a large input was just released.
enum FreedMemory {
    /// Trims on a utility thread: walking the heaps takes milliseconds a real-time splice has not got.
    static func releaseSoon() {
        DispatchQueue.global(qos: .utility).async { release() }
    }

    static func release() {
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
