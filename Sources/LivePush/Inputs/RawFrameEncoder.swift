import DequeModule

/// Encodes raw frames for the inputs that produce them (``FrameInput``, ``StillInput``): H.264
/// and AAC encoders, scaling to the configured size, and the packets handed out in timestamp
/// order across the two tracks (the video encoder holds a few frames back).
final class RawFrameEncoder {
    enum Next { case video(VideoFrame), audio(AudioFrame), end }

    let info: StreamInfo
    let videoEncoder: VideoFrameEncoder?
    let audioEncoder: AudioAACEncoder?
    private var pendingVideo: Deque<MediaPacket> = []
    private var pendingAudio: Deque<MediaPacket> = []
    private var flushed = false
    /// The next video frame is encoded as a keyframe.
    var forceKeyframe = false
    /// The push's detector and filters, when the pictures are the app's (``TakesFrameStages``);
    /// nil for a still, which shows what it was given.
    var stages: FrameStages?
    private let frameRate: Double

    init(video: FrameInput.VideoFormat?, audio: FrameInput.AudioFormat?, options: MediaSourceOptions,
         mixer: AudioMixer? = nil) throws(LivePushError) {
        guard video != nil || audio != nil else { throw LivePushError(.noUsableStream, "a frame input needs video or audio") }
        frameRate = video?.frameRate ?? 0
        var videoTrack: VideoTrackInfo?
        if let video {
            let settings = try VideoEncoderSettings(width: video.width, height: video.height, frameRate: video.frameRate,
                                                    options: options)
            let encoder = try VideoFrameEncoder(settings: settings, keepsPictures: options.keepsPicturesForRenditions)
            videoEncoder = encoder
            videoTrack = encoder.trackInfo
            videoTrack?.bitrate = settings.targetBitrate
        } else {
            videoEncoder = nil
        }
        var audioTrack: AudioTrackInfo?
        if let audio {
            guard audio.sampleRate > 0, (1...2).contains(audio.channels) else {
                throw LivePushError(.unsupportedCodec, "audio of \(audio.channels) channels at \(audio.sampleRate) Hz")
            }
            let bitrate = options.resolvedAudioBitrate(channels: audio.channels)
            let encoder = try AudioAACEncoder(format: .init(sampleRate: audio.sampleRate, channels: audio.channels),
                                              bitrate: bitrate, mixer: mixer)
            audioEncoder = encoder
            audioTrack = AudioTrackInfo(sampleRate: audio.sampleRate, channels: audio.channels, bitrate: bitrate,
                                        audioSpecificConfig: encoder.audioSpecificConfig)
        } else {
            audioEncoder = nil
        }
        info = StreamInfo(video: videoTrack, audio: audioTrack, duration: 0)
    }

    /// The next packet in timestamp order, encoding what `take` hands over (in timestamp order)
    /// until there is one; nil once `take` said `.end` and everything was flushed.
    func nextPacket(taking take: () throws(LivePushError) -> Next) throws(LivePushError) -> MediaPacket? {
        while true {
            let videoDone = videoEncoder == nil || flushed
            let audioDone = audioEncoder == nil || flushed
            if let v = pendingVideo.first, let a = pendingAudio.first {
                return v.dts <= a.dts ? pendingVideo.popFirst() : pendingAudio.popFirst()
            }
            // One track has nothing encoded yet: it may still produce earlier packets (the
            // video encoder holds a few frames), unless it is done.
            if !pendingVideo.isEmpty && audioDone { return pendingVideo.popFirst() }
            if !pendingAudio.isEmpty && videoDone { return pendingAudio.popFirst() }
            if flushed { return nil }
            switch try take() {
            case .video(let frame): try encode(frame)
            case .audio(let frame): try encode(frame)
            case .end:
                var out: [MediaPacket] = []
                try videoEncoder?.finish(into: &out)
                pendingVideo.append(contentsOf: out)
                out.removeAll()
                try audioEncoder?.finish(into: &out)
                pendingAudio.append(contentsOf: out)
                flushed = true
            }
        }
    }

    private func encode(_ frame: VideoFrame) throws(LivePushError) {
        guard let videoEncoder else { return }
        var frame = frame
        stages?.process(&frame, frameRate: frameRate)
        var out: [MediaPacket] = []
        try videoEncoder.encode(frame, keyframe: forceKeyframe, into: &out)
        forceKeyframe = false
        pendingVideo.append(contentsOf: out)
    }

    private func encode(_ frame: AudioFrame) throws(LivePushError) {
        guard let audioEncoder else { return }
        if audioEncoder.nextPts == nil {
            audioEncoder.nextPts = Int64(audioEncoder.format.samples(inMicros: frame.timestamp))
        }
        try audioEncoder.write(frame)
        var out: [MediaPacket] = []
        try audioEncoder.encodeFullFrames(into: &out)
        pendingAudio.append(contentsOf: out)
    }
}
