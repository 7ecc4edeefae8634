/// Where the renditions after the clock get each picture of the push's video (pure): the one
/// the packet carries from its input's encoder (``MediaPacket/picture``), else the stage's own
/// decode of the packet (a copied stream, an input that encodes elsewhere).
///
/// The boundary between the two: the decoder may still hold pictures when carried ones start
/// (they go first, and the decoder starts over), and it can only decode from a keyframe, so a
/// packet without a picture that is not a keyframe, while the decoder has not seen its GOP's
/// keyframe, is skipped (and counted by the stage).
struct RenditionPictureSource: Equatable {
    enum Decision: Equatable {
        /// Encode the picture the packet carries. With `drainDecoderFirst`, the decoder's last
        /// pictures go first, and it is opened afresh.
        case takePicture(drainDecoderFirst: Bool)
        /// Decode the packet.
        case decode
        /// Neither: no picture, and the decoder lacks the keyframe before it.
        case skip
    }

    /// The decoder was given packets since it was opened (it may hold pictures).
    private(set) var decoderFed = false
    /// The decoder has the keyframe of the GOP the next packet belongs to.
    private(set) var decoderHasKeyframe = false

    mutating func next(hasPicture: Bool, isKeyframe: Bool) -> Decision {
        if hasPicture {
            let drain = decoderFed
            if drain { decoderReopened() }
            return .takePicture(drainDecoderFirst: drain)
        }
        guard isKeyframe || decoderHasKeyframe else { return .skip }
        decoderFed = true
        if isKeyframe { decoderHasKeyframe = true }
        return .decode
    }

    /// A new decoder (a new configuration): it has seen nothing.
    mutating func decoderReopened() {
        decoderFed = false
        decoderHasKeyframe = false
    }
}
