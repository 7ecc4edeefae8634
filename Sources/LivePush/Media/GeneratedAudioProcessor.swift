import CFFmpeg

/// The audio track of a video-only source in mixing mode: silence on the video's timeline
/// with the BGM and effects mixed in (see ``AudioAACEncoder``), so the stream has one
/// continuous audio track whether music plays or not.
///
/// It has no demuxed stream: ``FileInput`` calls ``follow(videoUntil:into:)`` as video
/// packets are produced, and the track is generated up to the end of the latest video frame,
/// starting at the first frame's presentation time, which keeps the two in sync.
final class GeneratedAudioProcessor: AudioPacketProcessor {
    /// Matches no demuxed stream.
    let streamIndex: Int32 = -1
    let kind = MediaPacket.Kind.audio
    private let output: AudioAACEncoder
    /// Video time (µs) the track has been generated up to; nil before the first video frame.
    private var covered: Int64?

    init(options: MediaSourceOptions, mixer: AudioMixer) throws(LivePushError) {
        let format = AudioFormat(sampleRate: options.audioSampleRate ?? 44100, channels: 2)
        output = try AudioAACEncoder(format: format, bitrate: options.resolvedAudioBitrate(channels: format.channels),
                                     mixer: mixer)
    }

    var isConfigured: Bool { true }

    var trackInfo: AudioTrackInfo? {
        AudioTrackInfo(sampleRate: output.format.sampleRate, channels: output.format.channels, bitrate: output.bitrate,
                       audioSpecificConfig: output.audioSpecificConfig)
    }

    func process(_ packet: UnsafeMutablePointer<AVPacket>, into out: inout [MediaPacket]) throws(LivePushError) {}

    /// Generates audio (whole AAC frames) up to `time`, the end of the latest video frame.
    func follow(videoUntil time: Int64, start: Int64, into out: inout [MediaPacket]) throws(LivePushError) {
        if covered == nil {
            covered = start
            output.nextPts = Int64(output.format.samples(inMicros: start))
        }
        guard let from = covered, time > from else { return }
        let produced = (output.nextPts ?? 0) + Int64(output.buffered)
        let needed = Int64(output.format.samples(inMicros: time)) - produced
        covered = time
        guard needed > 0 else { return }
        try output.writeSilence(count: Int(needed))
        try output.encodeFullFrames(into: &out)
    }

    func finish(into out: inout [MediaPacket]) throws(LivePushError) {
        try output.finish(into: &out)
    }

    func reset() throws(LivePushError) {
        covered = nil
        try output.reset()
    }
}
