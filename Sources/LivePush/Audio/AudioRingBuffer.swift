/// A bounded FIFO of planar float samples between a decoder thread and the mixer.
///
/// Not thread-safe by itself: ``AudioStreamPlayer`` guards it with its lock. Storage is one
/// flat array (channel `c` at `c * capacity`) allocated once, so steady-state reads and
/// writes never allocate.
struct AudioRingBuffer {
    private(set) var channels: Int
    /// Samples per channel it can hold.
    let capacity: Int
    private var storage: [Float]
    private var readIndex = 0
    /// Samples per channel waiting to be read.
    private(set) var count = 0

    init(channels: Int, capacity: Int) {
        precondition(channels > 0 && capacity > 0)
        self.channels = channels
        self.capacity = capacity
        storage = [Float](repeating: 0, count: channels * capacity)
    }

    var space: Int { capacity - count }
    var isEmpty: Bool { count == 0 }

    /// Drops everything; a new channel count reallocates.
    mutating func reset(channels newChannels: Int) {
        if newChannels != channels {
            channels = newChannels
            storage = [Float](repeating: 0, count: newChannels * capacity)
        }
        readIndex = 0
        count = 0
    }

    /// Appends up to `space` samples from each of `planes` (one per channel, same length,
    /// starting at `offset`); returns how many were taken.
    @discardableResult
    mutating func write(_ planes: [UnsafeBufferPointer<Float>], from offset: Int = 0) -> Int {
        precondition(planes.count == channels, "\(planes.count) planes for \(channels) channels")
        let n = min(space, (planes.first?.count ?? 0) - offset)
        guard n > 0 else { return 0 }
        let start = (readIndex + count) % capacity
        let first = min(n, capacity - start)
        storage.withUnsafeMutableBufferPointer { buffer in
            for c in 0..<channels {
                let base = buffer.baseAddress! + c * capacity
                let source = planes[c].baseAddress! + offset
                (base + start).update(from: source, count: first)
                if n > first { base.update(from: source + first, count: n - first) }
            }
        }
        count += n
        return n
    }

    /// Removes up to `limit` samples per channel, handing them to `body` as (channel, offset
    /// in this read, samples) in at most two contiguous pieces per channel; returns how many.
    @discardableResult
    mutating func read(upTo limit: Int, _ body: (Int, Int, UnsafeBufferPointer<Float>) -> Void) -> Int {
        let n = min(limit, count)
        guard n > 0 else { return 0 }
        let first = min(n, capacity - readIndex)
        storage.withUnsafeBufferPointer { buffer in
            for c in 0..<channels {
                let base = buffer.baseAddress! + c * capacity
                body(c, 0, UnsafeBufferPointer(start: base + readIndex, count: first))
                if n > first { body(c, first, UnsafeBufferPointer(start: base, count: n - first)) }
            }
        }
        readIndex = (readIndex + n) % capacity
        count -= n
        return n
    }
}
