import DequeModule

/// One demuxer's worth of an HLS input's segments: what its custom AVIO reads, segment after
/// segment from the queue, until one that starts afresh (a discontinuity, a gap, a restart),
/// which it leaves for the next demuxer. Used on the reader thread only.
///
/// It knows where each segment begins in the bytes it handed out, so that the reader can
/// place the segment's cues at the media time of its first packet (``cues(atPacket:time:)``).
final class HLSByteSource: DemuxerByteSource {
    private let queue: HLSSegmentQueue
    private let name: String
    private let minimumWait: Duration
    private var current: [UInt8] = []
    private var offset = 0
    /// Bytes handed out before `current`.
    private var consumed: Int64 = 0
    /// Segments begun whose first packet has not been read yet: where each begins, its cues.
    private var starts = Deque<(position: Int64, cues: [[UInt8]])>()
    private var hasData = false
    /// The stream ended before a segment that starts afresh: the reader opens another demuxer.
    private(set) var endedAtBoundary = false
    /// Why the stream ended otherwise.
    private(set) var failure: LivePushError?
    /// Segments this demuxer has read.
    private(set) var segmentsRead = 0

    /// `minimumWait`: how long a read waits for the next segment before the feed counts as
    /// failed (the input timeout), or two target durations when that is longer (one is due
    /// every target duration); the target as the fetcher last read it.
    init(queue: HLSSegmentQueue, name: String, minimumWait: Duration) {
        self.queue = queue
        self.name = name
        self.minimumWait = minimumWait
    }

    private var wait: Duration { max(minimumWait, .microseconds(2 * queue.targetMicros)) }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        while offset >= current.count {
            if endedAtBoundary || failure != nil { return 0 }
            let wait = self.wait
            guard let segment = queue.take(timeout: wait) else {
                if queue.isStopped { return 0 }
                let why = queue.problem.map { $0.detail ?? $0.message } ?? "the playlist has no new segment"
                failure = LivePushError(.mediaReadFailed, "\(name): no segment for \(wait) (\(why))")
                return 0
            }
            if segment.boundary && hasData {
                queue.putBack(segment)
                endedAtBoundary = true
                return 0
            }
            consumed += Int64(current.count)
            current = segment.bytes
            offset = 0
            hasData = true
            segmentsRead += 1
            starts.append((consumed, segment.cues))
        }
        let count = min(buffer.count, current.count - offset)
        current.withUnsafeBytes { bytes in
            buffer.baseAddress!.copyMemory(from: bytes.baseAddress! + offset, byteCount: count)
        }
        offset += count
        return count
    }

    /// The cues of every segment whose first packet is the one at byte `position` (or before
    /// it), placed at `time` (µs, the packet's): nothing for a packet with no position or time.
    func cues(atPacket position: Int64, time: Int64?) -> [[UInt8]] {
        guard position >= 0, time != nil else { return [] }
        var cues: [[UInt8]] = []
        while let first = starts.first, first.position <= position {
            cues += first.cues
            starts.removeFirst()
        }
        return cues
    }
}
