import DequeModule

/// The bounded queue between the media side and the network side of a push.
///
/// It measures its backlog in microseconds of media and in bytes. In ``Mode/backpressure``
/// (a `--fast` file push) a full queue makes the producer wait, so nothing is lost. In
/// ``Mode/dropping`` (real time) a full queue sheds load in this order, which keeps every
/// frame that is still sent decodable:
/// 1. disposable video frames (non-reference B-frames), oldest first;
/// 2. the reference (P) frames at the tail of the oldest GOP that has a successor queued,
///    newest first, so what remains of that GOP is a decodable prefix;
/// 3. the whole oldest such GOP, keyframe included (never a keyframe without its GOP);
/// 4. only then audio, oldest first.
/// When one incomplete GOP alone exceeds the limits, later non-key video frames are dropped
/// until the next keyframe arrives (they could not be decoded without the frames dropped).
///
/// While the connection is down (``isDisconnected``) the order changes: thinning GOPs would
/// only leave holes in what is sent after the reconnect, so the oldest whole GOP goes first,
/// with the audio queued before its successor's keyframe. The queue then holds the newest
/// stretch of media, whole, starting on a keyframe.
///
/// Sequence headers (an input switch changed the codec configuration) and data messages (cues)
/// are never dropped: every frame after a header needs it, and a cue is the break's only signal.
struct SendQueue: Sendable {
    enum Mode: Sendable { case backpressure, dropping }

    struct Limits: Sendable, Equatable {
        /// Media duration the queue may hold, microseconds.
        var maxDuration: Int64
        var maxBytes: Int
    }

    let limits: Limits
    let mode: Mode
    private(set) var items: Deque<MediaPacket> = []
    private(set) var bytes = 0
    private(set) var drops = FrameDrops()
    private var droppingUntilKeyframe = false
    /// Set while the connection is down (see the type's comment).
    var isDisconnected = false

    init(limits: Limits, mode: Mode) {
        self.limits = limits
        self.mode = mode
    }

    var count: Int { items.count }
    var isEmpty: Bool { items.isEmpty }

    /// Media time between the oldest and the newest queued packet.
    var bufferedDuration: Int64 {
        guard let first = items.first, let last = items.last else { return 0 }
        return max(0, last.dts - first.dts)
    }

    var isOverLimit: Bool { bufferedDuration > limits.maxDuration || bytes > limits.maxBytes }

    /// In backpressure mode the producer waits while this is true.
    var isFull: Bool { isOverLimit }

    /// Where a waiting producer is woken again (hysteresis against a wake-up per packet).
    var isAtMostHalfFull: Bool { bufferedDuration <= limits.maxDuration / 2 && bytes <= limits.maxBytes / 2 }

    mutating func push(_ packet: MediaPacket) {
        if packet.isVideoFrame, droppingUntilKeyframe {
            if packet.isKeyframe {
                droppingUntilKeyframe = false
            } else {
                count(packet)
                return
            }
        }
        items.append(packet)
        bytes += packet.data.count
        if mode == .dropping { shed() }
    }

    mutating func pop() -> MediaPacket? {
        guard let packet = items.popFirst() else { return nil }
        bytes -= packet.data.count
        return packet
    }

    /// Empties the queue.
    mutating func removeAll() {
        items.removeAll()
        bytes = 0
    }

    /// Puts packets back at the head, oldest first: after a reconnect the GOP the server may
    /// not have received whole is sent again. Not subject to the drop policy.
    mutating func pushFront(_ packets: [MediaPacket]) {
        items.insert(contentsOf: packets, at: 0)
        bytes += packets.reduce(0) { $0 + $1.data.count }
    }

    /// Makes the head of the queue a video keyframe, so that a new connection starts on one:
    /// drops what precedes the first queued keyframe (counted as drops), or, when none is
    /// queued yet, every video frame until the next keyframe arrives.
    mutating func startAtKeyframe() {
        if let key = items.firstIndex(where: { $0.isVideoFrame && $0.isKeyframe }) {
            dropFirst(key)
        } else {
            for packet in items where packet.isVideoFrame { count(packet) }
            let kept = items.filter { !$0.isVideoFrame }
            bytes = kept.reduce(0) { $0 + $1.data.count }
            items = Deque(kept)
            droppingUntilKeyframe = true
        }
    }

    // MARK: - Drop policy

    private mutating func shed() {
        if isDisconnected { makeRoomByDroppingOldestGOPs() }
        while isOverLimit {
            if dropOldestDisposable() { continue }
            if dropTailOfOldestCompleteGOP() { continue }
            if dropOldestCompleteGOP() { continue }
            if !droppingUntilKeyframe, items.contains(where: \.isVideoFrame) {
                droppingUntilKeyframe = true
            }
            if dropOldestAudio() { continue }
            return
        }
    }

    private mutating func remove(at index: Int) {
        let packet = items.remove(at: index)
        bytes -= packet.data.count
        count(packet)
    }

    private mutating func count(_ packet: MediaPacket) {
        guard !packet.isNeverDropped else { return }
        switch (packet.kind, packet.importance) {
        case (.data, _), (.cue, _): break
        case (.audio, _): drops.audio += 1
        case (.video, .disposable): drops.disposable += 1
        case (.video, .reference): drops.reference += 1
        case (.video, .key): drops.keyframes += 1
        }
    }

    private mutating func dropOldestDisposable() -> Bool {
        guard let index = items.firstIndex(where: { $0.kind == .video && $0.importance == .disposable }) else { return false }
        remove(at: index)
        return true
    }

    /// The index of the second GOP's keyframe: everything video before it belongs to a GOP
    /// whose end is known.
    private var endOfOldestCompleteGOP: Int? {
        guard let firstVideo = items.firstIndex(where: \.isVideoFrame) else { return nil }
        return items[(firstVideo + 1)...].firstIndex(where: { $0.isVideoFrame && $0.isKeyframe })
    }

    private mutating func dropTailOfOldestCompleteGOP() -> Bool {
        guard let end = endOfOldestCompleteGOP,
              let index = items[..<end].lastIndex(where: { $0.kind == .video && $0.importance == .reference })
        else { return false }
        remove(at: index)
        return true
    }

    private mutating func dropOldestCompleteGOP() -> Bool {
        guard let end = endOfOldestCompleteGOP,
              let index = items[..<end].firstIndex(where: \.isVideoFrame)
        else { return false }
        remove(at: index)
        return true
    }

    /// Drops oldest whole GOPs, each with the audio queued before the next keyframe, until the
    /// queue is within its limits (or one GOP is left). While disconnected, and in back-pressure
    /// mode when the producer did not wait for this queue (its output is down while another
    /// carries the push).
    mutating func makeRoomByDroppingOldestGOPs() {
        while isOverLimit, let end = endOfOldestCompleteGOP { dropFirst(end) }
    }

    /// Drops (and counts) the first `n` packets, except the sequence headers and cues among them.
    private mutating func dropFirst(_ n: Int) {
        let headers = Array(items[..<n].filter(\.isNeverDropped))
        for packet in items[..<n] { count(packet) }
        bytes -= items[..<n].reduce(0) { $0 + $1.data.count }
        items.removeFirst(n)
        pushFront(headers)
    }

    private mutating func dropOldestAudio() -> Bool {
        guard let index = items.firstIndex(where: { $0.kind == .audio && !$0.isSequenceHeader }) else { return false }
        remove(at: index)
        return true
    }
}
