/// What plays a playout entry: a file clip (``ClipInput``) or a live feed (``FailoverInput``).
/// The producer's, like any input: asked on its thread only.
protocol PlayoutEntryInput: MediaInput {
    /// Seconds of the entry sent so far.
    var played: Double { get }
    /// These were handed out but not sent (a skip cut them off): ``played`` ends before them.
    func didNotSend(_ packets: [MediaPacket])
}

extension ClipInput: PlayoutEntryInput {}

extension FailoverInput: PlayoutEntryInput {
    /// A live entry's time is its own frame slots: what was cut off was never sent, and the
    /// feed cannot be replayed.
    func didNotSend(_ packets: [MediaPacket]) {}
}
