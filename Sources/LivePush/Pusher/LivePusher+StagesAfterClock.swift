extension LivePusher {
    /// The stages after the clock that the outputs need (``GraphPlan``): the renditions the app
    /// asked for and the Constrained Baseline encodes of WHIP outputs, and the Opus encode.
    func makeStagesAfterClock(for info: StreamInfo, urls: [PushURL],
                              inputsMayChange: Bool) throws(LivePushError) -> StagesAfterClock {
        if !config.outputVideo.isEmpty && info.video == nil {
            throw LivePushError(.outputSettingsInvalid, "per-output video was asked for, but the input has no video")
        }
        let media = config.media
        let plan = try GraphPlan.make(needs: urls.map { OutputNeeds(kind: $0.scheme) }, asked: config.outputVideo, video: info.video,
                                      hasAudio: info.audio != nil, inputsMayChange: inputsMayChange,
                                      defaultBitrateKbps: { media.resolvedVideoBitrate(width: $0.width, height: $0.height) / 1000 })
        let renditions = try info.video.flatMap { video throws(LivePushError) -> RenditionStage? in
            plan.renditions.isEmpty ? nil
                : try RenditionStage(renditions: plan.renditions, outputCount: urls.count, source: video, options: media)
        }
        let opus = try info.audio.flatMap { audio throws(LivePushError) -> OpusStage? in
            plan.opusOutputs.isEmpty ? nil : try OpusStage(outputs: plan.opusOutputs, outputCount: urls.count, source: audio)
        }
        return StagesAfterClock(renditions: renditions, opus: opus)
    }
}
