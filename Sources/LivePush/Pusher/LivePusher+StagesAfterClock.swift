extension LivePusher {
    /// What output `url` needs of the graph: its kind's needs, with the push's audio codec.
    func outputNeeds(_ url: PushURL) -> OutputNeeds {
        OutputNeeds(kind: OutputKind(url), rtmpAudio: mediaOptions.audioCodec)
    }

    /// The stages after the clock that the outputs need (``GraphPlan``): the renditions the app
    /// asked for and the Constrained Baseline encodes of WHIP outputs, and the Opus encode.
    func makeStagesAfterClock(for info: StreamInfo, urls: [PushURL], inputsMayChange: Bool,
                              videoEncode: VideoEncodeStage?, audioEncode: AudioEncodeStage?) throws(LivePushError) -> StagesAfterClock {
        if !config.outputVideoLadders.isEmpty && info.video == nil {
            throw LivePushError(.outputSettingsInvalid, "per-output video was asked for, but the input has no video")
        }
        let media = config.media
        let plan = try GraphPlan.make(needs: urls.map { outputNeeds($0) }, asked: config.outputVideoLadders, video: info.video,
                                      hasAudio: info.audio != nil, inputsMayChange: inputsMayChange,
                                      preference: config.videoCodecPreference,
                                      defaultBitrateKbps: { media.resolvedVideoBitrate(width: $0.width, height: $0.height) / 1000 })
        let renditions = try info.video.flatMap { video throws(LivePushError) -> RenditionStage? in
            plan.renditions.isEmpty ? nil
                : try RenditionStage(renditions: plan.renditions, outputCount: urls.count, source: video, options: media,
                                     alternatives: plan.alternatives, withPushVideo: plan.withPushVideo)
        }
        let opus = try info.audio.flatMap { audio throws(LivePushError) -> OpusStage? in
            plan.opusOutputs.isEmpty ? nil : try OpusStage(outputs: plan.opusOutputs, outputCount: urls.count, source: audio)
        }
        let firstSound = info.video != nil && audioEncode?.encodesFromStart == true ? FirstSoundGate() : nil
        return StagesAfterClock(videoEncode: videoEncode, audioEncode: audioEncode, renditions: renditions, opus: opus,
                                firstSound: firstSound)
    }

    /// The push's video encode after the clock, when an input may yield raw pictures: the
    /// source itself, the slate, or (with a sequence or breaks) an entry or a fill that may be
    /// a still. It encodes with the settings the source (else the slate) declared; otherwise
    /// at the source's size and rate with the push's options. Nil for a push that only copies.
    /// `channel`: a copy-mode playout channel's format, which its pictures (slates, live and
    /// transcoded entries) are encoded at whatever the first entry is.
    func makeVideoEncodeStage(source: StreamInfo, slate: StreamInfo?, inputsMayChange: Bool, urls: [PushURL],
                              channel: VideoEncoderSettings? = nil, stages: FrameStages) throws(LivePushError) -> VideoEncodeStage? {
        guard let video = source.video else { return nil }
        let settings: VideoEncoderSettings
        if let declared = channel ?? video.pictureSettings ?? slate?.video?.pictureSettings {
            settings = declared
        } else if inputsMayChange {
            settings = try VideoEncoderSettings(width: video.width, height: video.height, frameRate: video.frameRate, options: mediaOptions)
        } else {
            return nil
        }
        // Renditions take the pictures this encode was made from (``MediaPacket/picture``), not
        // a decode of it. What the plan decides later (GraphPlan) is not known yet: asked
        // renditions and WHIP outputs may have some, every other push never keeps a picture.
        let keepsPictures = !config.outputVideoLadders.isEmpty || config.videoCodecPreference.count > 1 || urls.contains { outputNeeds($0).constrainedBaselineH264 }
        return try VideoEncodeStage(settings: settings, stages: stages, main: video.pictureSettings != nil,
                                    adaptive: settings.adaptiveBitrate, keepsPictures: keepsPictures,
                                    clock: config.monotonicClock)
    }

    /// The push's sound encode after the clock, for a push with sound: its input, a slate, an
    /// entry or a fill may yield raw sound. One format per push: the input's own (declared by
    /// an input that yields raw sound, else the copied track's rate and channels, AAC's rates
    /// and at most two channels), so copied sound and raw sound after it differ in nothing a
    /// player must reopen for. The encoder opens at the start only when the input yields raw
    /// sound: a push that only copies holds none (``AudioEncodeStage``).
    /// With Opus outputs (WHIP) its packets carry the mixed sound they were made from, which the
    /// Opus encode takes (``OpusStage``).
    func makeAudioEncodeStage(source: StreamInfo, urls: [PushURL], stages: FrameStages) throws(LivePushError) -> AudioEncodeStage? {
        guard let audio = source.audio else { return nil }
        let channels = min(max(audio.channels, 1), 2)
        let rate = AACLowComplexityConfig.sampleRates.contains(audio.sampleRate) ? audio.sampleRate : 48000
        let bitrate = audio.yieldsRawSound && audio.bitrate > 0 ? audio.bitrate : mediaOptions.resolvedAudioBitrate(channels: channels)
        return try AudioEncodeStage(format: AudioFormat(sampleRate: rate, channels: channels), bitrate: bitrate,
                                    mixer: stages.mixer, main: audio.yieldsRawSound,
                                    keepsMixedSound: urls.contains { outputNeeds($0).audio == .opus },
                                    loudness: mediaOptions.loudness, figures: stages.figures.loudness)
    }

    /// What the outputs announce: a source that yields pictures or raw sound goes out as the
    /// push's encodes.
    static func announced(_ info: StreamInfo, encodedBy videoEncode: VideoEncodeStage?, audioEncode: AudioEncodeStage?) -> StreamInfo {
        var announced = info
        if let videoEncode, info.video?.pictureSettings != nil { announced.video = videoEncode.trackInfo }
        if let audioEncode, info.audio?.yieldsRawSound == true { announced.audio = audioEncode.trackInfo }
        return announced
    }
}
