/// Pictures in, encoded ``MediaPacket``s out, at one size and bitrate: a scaler in front of an
/// ``VideoEncoder``. What a rendition encodes with (``RenditionStage``), and the push's encode
/// of the pictures its inputs yield (``VideoEncodeStage``).
final class VideoFrameEncoder {
    let settings: VideoEncoderSettings
    private let encoder: VideoEncoder
    private let scaler: FrameScaler
    /// With `keepsPictures`: the pictures the encoder holds, for its packets to carry
    /// (``MediaPacket/picture``) to the renditions after the clock.
    private var awaiting: PicturesAwaitingEncode<VideoFrame>?

    init(settings: VideoEncoderSettings, keepsPictures: Bool = false) throws(LivePushError) {
        self.settings = settings
        encoder = try VideoEncoder(settings: settings)
        scaler = try FrameScaler(width: settings.width, height: settings.height)
        if keepsPictures { awaiting = PicturesAwaitingEncode() }
    }

    /// The track as its outputs announce it (sequence header, metadata).
    var trackInfo: VideoTrackInfo {
        VideoTrackInfo(codec: settings.codec, width: settings.width, height: settings.height, frameRate: settings.frameRate,
                       bitrate: encoder.bitrate, decoderConfiguration: encoder.decoderConfiguration)
    }

    var bitrate: Int { encoder.bitrate }

    /// Pictures kept that no packet came back for (0 unless the encoder drops pictures).
    var picturesUnmatched: Int { awaiting?.unmatched ?? 0 }

    func setBitrate(_ bitsPerSecond: Int) {
        encoder.setBitrate(bitsPerSecond)
    }

    /// Encodes `picture` at its own timestamp (µs), scaled to the configured size; with
    /// `keyframe`, as a keyframe.
    func encode(_ picture: VideoFrame, keyframe: Bool = false, into out: inout [MediaPacket]) throws(LivePushError) {
        var frame = picture.storage.frame
        let scaled = !scaler.fits(frame)
        if scaled { frame = try scaler.scale(frame) }
        try awaiting?.keep(picture, scaled: scaled ? frame : nil, at: picture.timestamp)
        let firstNew = out.count
        try encoder.encode(frame, timestamp: picture.timestamp, keyframe: keyframe, into: &out)
        awaiting?.attach(to: &out, from: firstNew)
    }

    /// What the encoder still holds.
    func finish(into out: inout [MediaPacket]) throws(LivePushError) {
        let firstNew = out.count
        try encoder.finish(into: &out)
        awaiting?.attach(to: &out, from: firstNew)
        awaiting?.discardAll()
    }
}
