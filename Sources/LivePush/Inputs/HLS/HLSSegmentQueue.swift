import DequeModule
import Synchronization

/// A segment as the fetcher hands it to the reader: its bytes, whether a new demuxer must read
/// it (a discontinuity, a gap, a restart), and the SCTE-35 sections of the tags before it.
struct HLSFetchedSegment: Sendable {
    var sequence: Int
    var bytes: [UInt8]
    /// Its `#EXTINF`, µs.
    var duration: Int64
    /// Its timestamps may not follow the previous segment's: the demuxer starts afresh.
    var boundary: Bool
    /// What its tags made (``HLSCueMapper``), in order.
    var cues: [[UInt8]]
}

/// The hand-over between an HLS input's fetcher (playlist and segments) and its reader (the
/// demuxer, the decoders, the pacing). Bounded: the fetcher waits for room, so that a reader
/// that stalls costs at most ``capacity`` segments (and a live window that slides meanwhile is
/// a gap, not memory). What went wrong last is kept for the reader's error message.
final class HLSSegmentQueue: Sendable {
    private struct State {
        var segments = Deque<HLSFetchedSegment>()
        var stopped = false
        var problem: LivePushError?
        var wake: (@Sendable () -> Void)?
        var targetMicros: Int64 = 2_000_000
    }

    /// Segments held at most: the one being read comes out of here, so this is what waits.
    let capacity: Int
    private let state = Mutex(State())
    /// One signal per side, each waited on by one thread: a ProgressSignal's wake is a count
    /// of signals, and a thread that waits for something else could take the one meant for
    /// the other (the reader's first segment waited for the next, 1.5 s late).
    private let arrived = ProgressSignal()
    /// The fetcher's: room, or a stop.
    private let freed = ProgressSignal()

    init(capacity: Int = 3) {
        self.capacity = max(1, capacity)
    }

    /// Called after each segment that arrives (the reader's backoff ends for it).
    func onArrival(_ wake: @escaping @Sendable () -> Void) {
        state.withLock { $0.wake = wake }
    }

    /// Adds a segment, waiting for room until `deadline` (µs of `clock`) at most. False when
    /// there was none by then (the segment is not added), or the queue was stopped.
    func push(_ segment: HLSFetchedSegment, waitingUntil deadline: Int64, clock: any MonotonicClock) -> Bool {
        let capacity = self.capacity
        while true {
            let (added, stopped, wake) = state.withLock { state -> (Bool, Bool, (@Sendable () -> Void)?) in
                guard !state.stopped else { return (false, true, nil) }
                guard state.segments.count < capacity else { return (false, false, nil) }
                state.segments.append(segment)
                state.problem = nil
                return (true, false, state.wake)
            }
            if added {
                arrived.wake()
                wake?()
                return true
            }
            if stopped { return false }
            let left = deadline - clock.now().microseconds
            guard left > 0 else { return false }
            freed.wait(limit: .microseconds(left)) {
                state.withLock { $0.stopped || $0.segments.count < capacity }
            }
        }
    }

    /// The oldest segment, waiting for one at most `timeout`; nil when none came (or stopped).
    func take(timeout: Duration) -> HLSFetchedSegment? {
        arrived.wait(limit: timeout) { state.withLock { $0.stopped || !$0.segments.isEmpty } }
        let segment = state.withLock { $0.stopped ? nil : $0.segments.popFirst() }
        if segment != nil { freed.wake() }
        return segment
    }

    /// Puts a segment taken back at the front, beyond the capacity: one that starts afresh
    /// belongs to the reader's next demuxer.
    func putBack(_ segment: HLSFetchedSegment) {
        state.withLock { $0.segments.prepend(segment) }
        arrived.wake()
    }

    /// Whether a segment waits (the reader's backoff ends early for it).
    var hasSegment: Bool { state.withLock { !$0.segments.isEmpty } }

    /// Forgets what waits (the origin restarted: the old segments are old news).
    func removeAll() {
        state.withLock { $0.segments.removeAll() }
        freed.wake()
    }

    /// What went wrong last (a playlist or a segment that did not load), until a segment arrives.
    var problem: LivePushError? {
        get { state.withLock { $0.problem } }
        set { state.withLock { $0.problem = newValue } }
    }

    /// The playlist's target duration (µs), as the fetcher last read it.
    var targetMicros: Int64 {
        get { state.withLock { $0.targetMicros } }
        set { state.withLock { $0.targetMicros = newValue } }
    }

    var isStopped: Bool { state.withLock { $0.stopped } }

    /// Ends every wait at once, and for good.
    func stop() {
        state.withLock {
            $0.stopped = true
            $0.segments.removeAll()
        }
        arrived.wake()
        freed.wake()
    }

    /// Sleeps until `deadline` (µs of `clock`) or a stop; false once stopped. The fetcher's.
    func sleep(until deadline: Int64, clock: any MonotonicClock) -> Bool {
        let left = deadline - clock.now().microseconds
        if left > 0 { freed.wait(limit: .microseconds(left)) { state.withLock { $0.stopped } } }
        return !isStopped
    }
}
