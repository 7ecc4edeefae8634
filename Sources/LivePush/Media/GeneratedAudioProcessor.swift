import CFFmpeg

/// The audio track of a video-only source in mixing mode: silence on the video's timeline, as
/// raw sound (``MediaPacket/rawSound(_:)``) that the push's encode after the clock mixes the
/// BGM and effects into (``AudioEncodeStage``), so the stream has one continuous audio track
/// whether music plays or not.
///
/// It has no demuxed stream: ``FileInput`` calls ``follow(videoUntil:start:into:)`` as video
/// packets are produced, and the track is generated up to the end of the latest video frame,
/// starting at the first frame's presentation time, which keeps the two in sync.
final class GeneratedAudioProcessor: AudioPacketProcessor {
    /// Matches no demuxed stream.
    let streamIndex: Int32 = -1
    let kind = MediaPacket.Kind.audio
    private let format: AudioFormat
    private let bitrate: Int
    /// Video time (µs) the track has been generated up to; nil before the first video frame.
    private var covered: Int64?
    /// The next sample's time, in samples.
    private var nextSample: Int64 = 0

    init(options: MediaSourceOptions) {
        format = AudioFormat(sampleRate: options.audioSampleRate ?? 44100, channels: 2)
        bitrate = options.resolvedAudioBitrate(channels: format.channels)
    }

    var isConfigured: Bool { true }

    var trackInfo: AudioTrackInfo? { .rawSound(format, bitrate: bitrate) }

    func process(_ packet: UnsafeMutablePointer<AVPacket>, into out: inout [MediaPacket]) throws(LivePushError) {}

    /// Generates silence up to `time`, the end of the latest video frame.
    func follow(videoUntil time: Int64, start: Int64, into out: inout [MediaPacket]) throws(LivePushError) {
        if covered == nil {
            covered = start
            nextSample = Int64(format.samples(inMicros: start))
        }
        guard let from = covered, time > from else { return }
        covered = time
        let needed = Int64(format.samples(inMicros: time)) - nextSample
        guard needed > 0 else { return }
        let silence = try AudioFrame(sampleRate: format.sampleRate, channels: format.channels, sampleCount: Int(needed),
                                     timestamp: format.micros(ofSamples: nextSample))
        nextSample += needed
        out.append(.rawSound(silence))
    }

    func finish(into out: inout [MediaPacket]) throws(LivePushError) {}

    func reset() throws(LivePushError) {
        covered = nil
    }
}
