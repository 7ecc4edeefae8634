import DequeModule

/// The pictures an input's encoder was given and has not yet returned as packets, so that each
/// packet can carry the picture it was encoded from (``MediaPacket/picture``) to the renditions
/// after the clock, which then never decode the input's own encode (``RenditionStage``).
///
/// Pure bookkeeping, matched by presentation time: an encoder stamps its packet with the time
/// its picture went in with (µs). The live encoders make no B-frames, so packets come out in
/// the order the pictures went in, a few frames late (frame threads, look-ahead): a picture
/// older than the packet just returned was never encoded (or its packet was lost) and is let
/// go. At most `capacity` wait: an encoder that swallows pictures cannot make them pile up.
struct PicturesAwaitingEncode<Picture> {
    /// Pictures that went in, oldest first, with their times (strictly increasing).
    private var waiting: Deque<(time: Int64, picture: Picture)> = []
    let capacity: Int
    /// Pictures let go unmatched: never returned as a packet, pushed out by the bound, or
    /// still waiting when the encoder was replaced.
    private(set) var unmatched = 0

    init(capacity: Int = 16) {
        precondition(capacity > 0, "capacity \(capacity)")
        self.capacity = capacity
    }

    var count: Int { waiting.count }

    /// `picture` goes into the encoder at `time`.
    mutating func add(_ picture: Picture, at time: Int64) {
        // A timeline that goes back (an encoder restarted without being told here) leaves
        // nothing before it to match.
        if let last = waiting.last, last.time >= time { discardAll() }
        if waiting.count == capacity {
            waiting.removeFirst()
            unmatched += 1
        }
        waiting.append((time, picture))
    }

    /// The picture of the packet the encoder returned at `time`, if it is waiting; the older
    /// ones are let go.
    mutating func take(at time: Int64) -> Picture? {
        while let first = waiting.first, first.time < time {
            waiting.removeFirst()
            unmatched += 1
        }
        guard let first = waiting.first, first.time == time else { return nil }
        waiting.removeFirst()
        return first.picture
    }

    /// The encoder was replaced or drained: nothing still waiting will come out.
    mutating func discardAll() {
        unmatched += waiting.count
        waiting.removeAll()
    }
}
