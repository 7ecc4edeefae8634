/// After the clock, before the outputs: at the start of a push whose sound the push encodes
/// itself (``AudioEncodeStage``), pictures wait for the first coded sound.
///
/// An AAC encoder hands out its first frame only once the next one or two are in (its look-ahead),
/// so without this the first pictures reach the server before the sound that starts with or
/// before them. nginx-rtmp takes the first media message's timestamp as its recording's zero:
/// with sound starting 23 ms before the pictures, it rebased the recording by 23 ms when a
/// picture came first. With the gate the first media the outputs get is the earliest.
///
/// What waits: everything but sound (pictures, their headers, cues), in order, released right
/// after the first sound frame. Bounded: once what waits spans more than ``holdLimit`` of media
/// (a push whose sound starts late, or never comes), it all goes on without the sound, and the
/// gate stays open. It opens once per push; later encoder restarts (after copied sound) are
/// mid-stream, where servers take the tracks as they come.
/// Owned by the producer.
final class FirstSoundGate {
    /// The longest stretch of media held back (µs): a few frames of look-ahead need ~70 ms.
    static let holdLimit: Int64 = 500_000

    private(set) var isOpen = false
    private var held: [MediaPacket] = []

    /// `packet` goes on (or waits): what the outputs take now, in order, goes to `send`.
    func admit(_ packet: MediaPacket, send: (MediaPacket) throws(LivePushError) -> Void) throws(LivePushError) {
        guard !isOpen else { return try send(packet) }
        if packet.kind == .audio {
            if packet.isSequenceHeader { return try send(packet) }
            try send(packet)
            return try open(send: send)
        }
        held.append(packet)
        if let first = held.first, packet.dts - first.dts > Self.holdLimit {
            try open(send: send)
        }
    }

    /// The end of the push: what waits goes on.
    func finish(send: (MediaPacket) throws(LivePushError) -> Void) throws(LivePushError) {
        try open(send: send)
    }

    private func open(send: (MediaPacket) throws(LivePushError) -> Void) throws(LivePushError) {
        isOpen = true
        let waiting = held
        held = []
        for packet in waiting { try send(packet) }
    }
}
