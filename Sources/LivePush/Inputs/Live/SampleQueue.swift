import DequeModule

/// Decoded sound waiting to be taken by the sample rather than by the frame: a live feed's
/// jitter buffer and a backup's read-ahead. The frames share their samples; only what is taken
/// is copied, into the block the output encodes.
struct SampleQueue {
    private var frames = Deque<AudioFrame>()
    /// Samples of `frames.first` already taken.
    private var offset = 0
    /// Samples waiting.
    private(set) var count = 0

    mutating func append(_ frame: AudioFrame) {
        frames.append(frame)
        count += frame.sampleCount
    }

    mutating func removeAll() {
        frames.removeAll()
        offset = 0
        count = 0
    }

    /// A cap: drops whole frames, oldest first, while more than `limit` samples wait.
    mutating func dropOldest(whileMoreThan limit: Int) {
        while count > limit { dropFirst() }
    }

    /// Catching up: drops whole frames, oldest first, as long as at least `keep` samples remain.
    mutating func dropOldest(keepingAtLeast keep: Int) {
        while let first = frames.first, count - (first.sampleCount - offset) >= keep { dropFirst() }
    }

    private mutating func dropFirst() {
        guard let first = frames.popFirst() else { return }
        count -= first.sampleCount - offset
        offset = 0
    }

    /// The source time (µs) of the next sample waiting; nil when nothing waits.
    func headTime(sampleRate: Int) -> Int64? {
        frames.first.map { $0.timestamp + MediaTime(samples: Int64(offset), rate: sampleRate).microseconds }
    }

    /// The source time (µs) just after the newest sample waiting; nil when nothing waits.
    func tailTime(sampleRate: Int) -> Int64? {
        frames.last.map { $0.timestamp + MediaTime(samples: Int64($0.sampleCount), rate: sampleRate).microseconds }
    }

    /// Drops the samples older than source time `time` (µs).
    mutating func drop(before time: Int64, sampleRate: Int) {
        while let first = frames.first {
            let head = first.timestamp + MediaTime(samples: Int64(offset), rate: sampleRate).microseconds
            guard head < time else { return }
            let older = Int((time - head) * Int64(sampleRate) / MediaTime.microsecondsPerSecond)
            let left = first.sampleCount - offset
            guard older < left else {
                dropFirst()
                continue
            }
            offset += older
            count -= older
            return
        }
    }

    /// Takes up to `wanted` samples, as spans of the frames they are in: `(frame, from, to,
    /// count)` copies `count` samples from `from` in `frame` to `to` in the block being filled.
    mutating func take(_ wanted: Int) -> [(frame: AudioFrame, from: Int, to: Int, count: Int)] {
        var spans: [(frame: AudioFrame, from: Int, to: Int, count: Int)] = []
        var filled = 0
        while filled < wanted, let first = frames.first {
            let take = min(wanted - filled, first.sampleCount - offset)
            spans.append((first, offset, filled, take))
            filled += take
            offset += take
            count -= take
            if offset == first.sampleCount {
                frames.removeFirst()
                offset = 0
            }
        }
        return spans
    }

    /// Copies what ``take(_:)`` returned into `block`; the rest of the block keeps its silence.
    /// `at`: where in the block the first span goes (silence before it).
    static func copy(_ spans: [(frame: AudioFrame, from: Int, to: Int, count: Int)], into block: inout AudioFrame,
                     at start: Int = 0) throws(LivePushError) {
        for span in spans {
            let planes = (0..<block.channels).map { span.frame.samples(ofChannel: $0, from: span.from) }
            try block.replaceSamples(at: start + span.to, fromPlanes: planes, count: span.count)
        }
    }
}
