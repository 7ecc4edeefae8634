/// Pictures in, encoded ``MediaPacket``s out, at one size and bitrate: a scaler in front of an
/// ``VideoEncoder``. What a rendition encodes with (``RenditionStage``).
final class VideoFrameEncoder {
    let settings: VideoEncoderSettings
    private let encoder: VideoEncoder
    private let scaler: FrameScaler

    init(settings: VideoEncoderSettings) throws(LivePushError) {
        self.settings = settings
        encoder = try VideoEncoder(settings: settings)
        scaler = try FrameScaler(width: settings.width, height: settings.height)
    }

    /// The track as its outputs announce it (sequence header, metadata).
    var trackInfo: VideoTrackInfo {
        VideoTrackInfo(codec: settings.codec, width: settings.width, height: settings.height, frameRate: settings.frameRate,
                       bitrate: encoder.bitrate, decoderConfiguration: encoder.decoderConfiguration)
    }

    var bitrate: Int { encoder.bitrate }

    func setBitrate(_ bitsPerSecond: Int) {
        encoder.setBitrate(bitsPerSecond)
    }

    /// Encodes `picture` at its own timestamp (µs), scaled to the configured size; with
    /// `keyframe`, as a keyframe.
    func encode(_ picture: VideoFrame, keyframe: Bool = false, into out: inout [MediaPacket]) throws(LivePushError) {
        var frame = picture.storage.frame
        if !scaler.fits(frame) { frame = try scaler.scale(frame) }
        try encoder.encode(frame, timestamp: picture.timestamp, keyframe: keyframe, into: &out)
    }

    /// What the encoder still holds.
    func finish(into out: inout [MediaPacket]) throws(LivePushError) {
        try encoder.finish(into: &out)
    }
}
