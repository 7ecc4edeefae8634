import DequeModule

/// Hands out the media of the inputs that make their own frames (``FrameInput``, ``StillInput``,
/// a live feed's slots in ``FailoverSlots``) as they are, for the push's encodes after the
/// clock: the pictures for ``VideoEncodeStage`` (which also runs the filters and scales them),
/// the sound for ``AudioEncodeStage`` (which mixes the push's music into it and encodes AAC);
/// in timestamp order across the two tracks.
final class RawFrameQueue {
    enum Next { case video(VideoFrame), audio(AudioFrame), end }

    let info: StreamInfo
    /// What the push's encode would use for these pictures (nil without video).
    let videoSettings: VideoEncoderSettings?
    /// The sound's format (nil without audio).
    let audioFormat: AudioFormat?
    private var pendingVideo: Deque<MediaPacket> = []
    private var pendingAudio: Deque<MediaPacket> = []
    private var ended = false
    /// The next sound sample's time, in samples; nil before the first.
    private var nextAudioSample: Int64?
    /// The next picture starts a GOP: the first, the first after a switch back (``MediaPacket/rawPicture(_:duration:keyframe:shownAsIs:)``).
    var forceKeyframe = true
    /// A keyframe is asked for at the first picture at or after this time (µs).
    private var keyframeAt: Int64?
    /// The pictures skip the push's detector and filters (a still shows what it was given).
    private let picturesShownAsIs: Bool

    init(video: FrameInput.VideoFormat?, audio: FrameInput.AudioFormat?, options: MediaSourceOptions,
         picturesShownAsIs: Bool = false) throws(LivePushError) {
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
            let format = AudioFormat(sampleRate: audio.sampleRate, channels: audio.channels)
            // The push's AAC encode takes these rates only (it refused others when it ran here).
            guard let track = AudioTrackInfo.rawSound(format, bitrate: options.resolvedAudioBitrate(channels: audio.channels)) else {
                throw LivePushError(.unsupportedCodec, "audio of \(audio.channels) channels at \(audio.sampleRate) Hz")
            }
            audioFormat = format
            audioTrack = track
        } else {
            audioFormat = nil
        }
        info = StreamInfo(video: videoTrack, audio: audioTrack, duration: 0)
    }

    /// The next packet in timestamp order, taking what `take` hands over (in timestamp order)
    /// until there is one; nil once `take` said `.end` and everything was handed out.
    func nextPacket(taking take: () throws(LivePushError) -> Next) throws(LivePushError) -> MediaPacket? {
        while true {
            if let v = pendingVideo.first, let a = pendingAudio.first {
                return v.dts <= a.dts ? pendingVideo.popFirst() : pendingAudio.popFirst()
            }
            // One track has nothing yet: the other waits for it (what `take` hands over next
            // may come earlier), unless it is done.
            if !pendingVideo.isEmpty && (audioFormat == nil || ended) { return pendingVideo.popFirst() }
            if !pendingAudio.isEmpty && (videoSettings == nil || ended) { return pendingAudio.popFirst() }
            if ended { return nil }
            switch try take() {
            case .video(let frame): yield(frame)
            case .audio(let frame): stamp(frame)
            case .end: ended = true
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

    /// Sound is stamped by sample count from its first frame on, as the AAC encoder that ran
    /// here did: an app's frames stamped on arrival jitter by milliseconds, and the push's
    /// encode after the clock takes stamps as they are (``SoundPlacement``).
    private func stamp(_ frame: AudioFrame) {
        guard let audioFormat else { return }
        var sound = frame
        let first = nextAudioSample ?? Int64(audioFormat.samples(inMicros: frame.timestamp))
        sound.timestamp = audioFormat.micros(ofSamples: first)
        nextAudioSample = first + Int64(frame.sampleCount)
        pendingAudio.append(.rawSound(sound))
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
}
