import DequeModule

/// In `--fast` mode, what an output sends again after a reconnect so that no frame is lost: the
/// packets the server may not have received, from the keyframe before them.
///
/// "May not have received" is measured against the server's RTMP Acknowledgements (the output
/// asks for them with a Window Acknowledgement Size after publishing; nginx-rtmp and the
/// loopback both honour it). An acknowledged byte was read by the server, not merely by its
/// kernel: a server's receive buffer alone can hold megabytes on loopback, and is lost with
/// the connection. Until a connection's first acknowledgement (or with a server that never
/// sends one) a fixed window stands in for it.
///
/// Byte positions are counted on each connection as the session counts what it writes: high
/// (``RTMPSession/bytesSent``), so that a packet counts as received only when it surely was.
/// Pure state; the sender thread owns it.
struct ResendHistory: Sendable {
    struct Limits: Sendable {
        /// Unacknowledged bytes assumed in flight while the server has not acknowledged anything.
        var fallbackWindow: Int64
        /// Never keeps more than this unacknowledged (a server that stops acknowledging).
        var maxUnconfirmed: Int64 = 32 * 1024 * 1024
    }

    let limits: Limits
    /// Without video there are no keyframes to resume at: the history is cut packet by packet.
    let hasVideo: Bool
    /// A packet sent on this connection, with the byte position at its end.
    struct Entry: Sendable {
        let packet: MediaPacket
        let end: Int64
    }

    /// Packets sent on this connection, oldest first.
    private(set) var entries: Deque<Entry> = []
    /// Where the video keyframes are in `entries`, counted from the first entry ever recorded
    /// (`dropped` of them are gone): trimming finds the next one without scanning the history.
    private var keyframes: Deque<Int> = []
    private var dropped = 0
    /// Bytes the server acknowledged on this connection, unwrapped from the 32-bit sequence number.
    private(set) var acknowledged: Int64?
    private var lastSequenceNumber: UInt32 = 0
    private var latestEnd: Int64 = 0

    init(limits: Limits, hasVideo: Bool) {
        self.limits = limits
        self.hasVideo = hasVideo
    }

    /// A packet about to be written; `end` is the connection's byte count once it is.
    mutating func record(_ packet: MediaPacket, end: Int64) {
        // What went before a new video configuration cannot be sent again under it.
        if packet.isSequenceHeader && packet.kind == .video { dropFirst(entries.count) }
        if packet.kind == .video && packet.isKeyframe { keyframes.append(dropped + entries.count) }
        entries.append(Entry(packet: packet, end: end))
        latestEnd = max(latestEnd, end)
        trim()
    }

    /// The server's Acknowledgement: it has read `sequenceNumber` bytes (modulo 2^32) of this connection.
    mutating func acknowledge(sequenceNumber: UInt32) {
        guard let previous = acknowledged else {
            acknowledged = Int64(sequenceNumber)
            lastSequenceNumber = sequenceNumber
            return trim()
        }
        let step = Int64(sequenceNumber &- lastSequenceNumber)
        lastSequenceNumber = sequenceNumber
        // A step past what was written is a server resetting its counter (nginx-rtmp does at
        // 0xf0000000), not progress: keep the position, count on from the new number.
        guard previous + step <= latestEnd else { return }
        acknowledged = previous + step
        trim()
    }

    /// Byte position up to which everything surely arrived.
    var confirmed: Int64 {
        guard let acknowledged else { return latestEnd - limits.fallbackWindow }
        return max(acknowledged, latestEnd - limits.maxUnconfirmed)
    }

    /// The packets to send again on the next connection; the history starts over with it.
    mutating func takeForResend() -> [MediaPacket] {
        defer {
            dropFirst(entries.count)
            acknowledged = nil
            lastSequenceNumber = 0
            latestEnd = 0
        }
        return entries.map(\.packet)
    }

    /// Whether `packets` (from ``takeForResend()``) can open the next connection: their first
    /// video frame is a keyframe. Audio may come before it: a connection's first packets often
    /// are audio, when the history was not cut yet (no acknowledgement came before the loss).
    static func canOpenAConnection(with packets: [MediaPacket], hasVideo: Bool) -> Bool {
        guard hasVideo else { return !packets.isEmpty }
        return packets.first(where: \.isVideoFrame)?.isKeyframe == true
    }

    /// Keeps the newest keyframe that precedes what is unconfirmed, and everything after it.
    private mutating func trim() {
        let confirmed = confirmed
        guard hasVideo else {
            var count = 0
            while count < entries.count, entries[count].end <= confirmed { count += 1 }
            return dropFirst(count)
        }
        // The first keyframe after the first entry: what precedes it may go once it all arrived.
        while let keyframe = keyframes.first {
            let position = keyframe - dropped
            if position < 1 {
                keyframes.removeFirst()
                continue
            }
            guard entries[position - 1].end <= confirmed else { break }
            dropFirst(position)
        }
    }

    private mutating func dropFirst(_ count: Int) {
        guard count > 0 else { return }
        entries.removeFirst(count)
        dropped += count
        while let keyframe = keyframes.first, keyframe < dropped { keyframes.removeFirst() }
    }
}
