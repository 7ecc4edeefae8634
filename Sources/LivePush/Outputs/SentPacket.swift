/// What an output counts of a packet it wrote: its figures, without its bytes. The send path
/// keeps this rather than the packet, so that counting holds no reference to the data.
struct SentPacket: Sendable {
    /// Output dts, with the resume shift.
    let dts: Int64
    /// When the clock made it due (``MediaPacket/due``).
    let due: Int64
    let countsAs: Counted
    /// Bytes of the message body.
    let bytes: Int

    enum Counted: Sendable { case videoFrame, audioFrame, other }

    init(_ packet: MediaPacket, bytes: Int) {
        dts = packet.dts
        due = packet.due
        countsAs = packet.isNeverDropped ? .other : (packet.kind == .video ? .videoFrame : .audioFrame)
        self.bytes = bytes
    }
}
