import DequeModule

/// Hands out the media of the inputs that make their own frames (``FrameInput``, ``StillInput``,
/// a live feed's slots in ``FailoverSlots``): the pictures as they are, for the push's one video
/// encode after the clock (``VideoEncodeStage``, which also runs the filters and scales them),
/// and the sound encoded to AAC here; in timestamp order across the two tracks (the AAC encoder
/// holds samples until a frame is full).
final class RawFrameEncoder {
    enum Next { case video(VideoFrame), audio(AudioFrame), end }

    let info: StreamInfo
    /// What the push's encode would use for these pictures (nil without video).
    let videoSettings: VideoEncoderSettings?
    let audioEncoder: AudioAACEncoder?
    private var pendingVideo: Deque<MediaPacket> = []
    private var pendingAudio: Deque<MediaPacket> = []
    private var flushed = false
    /// The next picture starts a GOP: the first, the first after a switch back (``MediaPacket/rawPicture(_:duration:keyframe:shownAsIs:)``).
    var forceKeyframe = true
    /// A keyframe is asked for at the first picture at or after this time (µs).
    private var keyframeAt: Int64?
    /// The pictures skip the push's detector and filters (a still shows what it was given).
    private let picturesShownAsIs: Bool

    init(video: FrameInput.VideoFormat?, audio: FrameInput.AudioFormat?, options: MediaSourceOptions,
         mixer: AudioMixer? = nil, picturesShownAsIs: Bool = false) throws(LivePushError) {
        guard video != nil || audio != nil else { throw LivePushError(.noUsableStream, "a frame input needs video or audio") }
        self.picturesShownAsIs = picturesShownAsIs
        var videoTrack: VideoTrackInfo?
        if let video {
            let settings = try VideoEncoderSettings(width: video.width, height: video.height, frameRate: video.frameRate,
                                                    options: options)
            videoSettings = settings
            videoTrack = VideoTrackInfo(codec: settings.codec, width: settings.width, height: settings.height,
                                        frameRate: settings.frameRate, bitrate: settings.targetBitrate, decoderConfiguration: [])
            videoTrack?.pictureSettings = settings
        } else {
            videoSettings = nil
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

    /// The next packet in timestamp order, taking what `take` hands over (in timestamp order)
    /// until there is one; nil once `take` said `.end` and everything was flushed.
    func nextPacket(taking take: () throws(LivePushError) -> Next) throws(LivePushError) -> MediaPacket? {
        while true {
            let videoDone = videoSettings == nil || flushed
            let audioDone = audioEncoder == nil || flushed
            if let v = pendingVideo.first, let a = pendingAudio.first {
                return v.dts <= a.dts ? pendingVideo.popFirst() : pendingAudio.popFirst()
            }
            // One track has nothing yet: it may still produce earlier packets (the AAC encoder
            // holds samples), unless it is done.
            if !pendingVideo.isEmpty && audioDone { return pendingVideo.popFirst() }
            if !pendingAudio.isEmpty && videoDone { return pendingAudio.popFirst() }
            if flushed { return nil }
            switch try take() {
            case .video(let frame): yield(frame)
            case .audio(let frame): try encode(frame)
            case .end:
                var out: [MediaPacket] = []
                try audioEncoder?.finish(into: &out)
                pendingAudio.append(contentsOf: out)
                flushed = true
            }
        }
    }

    /// Another input goes on air: what is ready goes out before the switch, in timestamp order,
    /// and the next picture starts a GOP when this input is back on air.
    func suspend() -> [MediaPacket] {
        forceKeyframe = true
        var ready: [MediaPacket] = []
        ready.reserveCapacity(pendingVideo.count + pendingAudio.count)
        while let v = pendingVideo.first, let a = pendingAudio.first {
            ready.append((v.dts <= a.dts ? pendingVideo.popFirst() : pendingAudio.popFirst())!)
        }
        ready.append(contentsOf: pendingVideo)
        ready.append(contentsOf: pendingAudio)
        pendingVideo.removeAll()
        pendingAudio.removeAll()
        return ready
    }

    /// A keyframe at the first picture at or after `time` (µs; `.min`: the next).
    func requestKeyframe(atOrAfter time: Int64) {
        keyframeAt = time
    }

    private func yield(_ frame: VideoFrame) {
        guard let videoSettings else { return }
        var keyframe = forceKeyframe
        if let at = keyframeAt, frame.timestamp >= at {
            keyframe = true
            keyframeAt = nil
        }
        forceKeyframe = false
        pendingVideo.append(.rawPicture(frame, duration: videoSettings.frameDuration, keyframe: keyframe,
                                        shownAsIs: picturesShownAsIs))
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
