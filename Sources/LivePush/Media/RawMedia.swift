/// The raw picture or sound a packet carries (``MediaPacket/picture``, ``MediaPacket/sound``),
/// held by one reference.
///
/// A packet is copied at every hop (switcher, clock, each output's queue) and most packets
/// carry no raw media (copied streams, coded packets): inline, the two optional frames made
/// the packet 40 bytes larger and its copy an outlined value-witness call with three more
/// retains. Boxed, a packet is one optional pointer larger, and copying it is two retains.
/// Immutable: a change makes a new box (rare: a stage takes the frame out and hands on coded
/// packets).
final class RawMedia: Sendable {
    let picture: VideoFrame?
    let sound: AudioFrame?
    /// A raw picture that skips the push's detector and filters.
    let isShownAsIs: Bool

    init(picture: VideoFrame?, sound: AudioFrame?, isShownAsIs: Bool) {
        self.picture = picture
        self.sound = sound
        self.isShownAsIs = isShownAsIs
    }

    /// A box holding `picture`, `sound` and `isShownAsIs`, or nil when it would hold nothing.
    static func holding(picture: VideoFrame?, sound: AudioFrame?, isShownAsIs: Bool) -> RawMedia? {
        picture == nil && sound == nil && !isShownAsIs ? nil : RawMedia(picture: picture, sound: sound, isShownAsIs: isShownAsIs)
    }
}
