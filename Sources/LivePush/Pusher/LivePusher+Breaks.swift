/// Breaks signalled in a file's cues: the opportunities they open, filled with ads, the
/// alternate content or the slate (see ``BreakOptions`` and ``ResolverRegistry``).
extension LivePusher {
    /// Replaces the main content with the alternate content (else a black slate) from its next
    /// picture, for `duration` or until ``endBlackout()``; the main input runs on underneath.
    /// The push announces it in the stream (a cue-out, and a return at its end). Throws
    /// `invalidState` unless a file push or a playout channel is running.
    public func startBlackout(for duration: Duration? = nil) throws(LivePushError) {
        try sendBreakCommand(.startBlackout(duration: duration))
    }

    /// Ends the blackout (or break) on air: the main content comes back on its next keyframe.
    public func endBlackout() throws(LivePushError) {
        try sendBreakCommand(.endBlackout)
    }

    private func sendBreakCommand(_ command: EngineCommand) throws(LivePushError) {
        guard let session = runningPush, session.breakResolution != nil, isPushing else {
            throw LivePushError(.invalidState, "blackouts need a running push of a file or a playout channel")
        }
        session.send(command)
    }

    /// What the push of `path` needs to play its breaks. The alternate content is opened once
    /// here, so that a missing or unreadable one fails the start rather than the first break.
    func makeBreakSetup(for info: StreamInfo, path: String?, stages: FrameStages,
                        blackouts: [BlackoutWindow] = []) throws(LivePushError) -> BreakSetup {
        var options = config.breaks
        options.blackouts += blackouts
        if options.fallback == .alternate && options.alternate == nil {
            throw LivePushError(.breakSetupInvalid, "the fallback is the alternate content, but no alternate content is given")
        }
        let fillOptions = breakFillOptions(for: info, encodesVideo: stages.figures.encodesVideo)
        if let alternate = options.alternate {
            do {
                _ = try MediaInputFactory.open(path: alternate, options: fillOptions, stages: FrameStages())
            } catch {
                throw LivePushError(.breakSetupInvalid, "alternate content \(alternate): \(error.message)")
            }
        }
        let copy = !fillOptions.forceTranscode
        let director = BreakDirector(options: options, resolvers: resolvers,
                                     upFrontCues: path.flatMap(CueScan.upFront(of:))) { [weak self] event in
            self?.emit(.breaks(event))
        }
        // The fills open on the opening pool (``OpeningInput``), never on the producer's pacing
        // thread. They keep the push's stages only as a reference, used by the producer once on air.
        let alternate = options.alternate ?? ""
        let open: @Sendable (BreakFill) throws(LivePushError) -> sending any MediaInput = { fill throws(LivePushError) in
            switch fill {
            case .ad(let clip):
                return try ClipInput(path: clip.source, in: clip.inPoint, out: clip.outPoint, options: fillOptions, copy: copy, stages: stages)
            case .alternate:
                // As a clip from its start: cut like a playout entry (its sound from its first
                // picture on), so the splice into it leaves no hole in the pictures.
                return try ClipInput(path: alternate, in: 0, out: Self.wholeFile, options: fillOptions, copy: copy, stages: stages)
            case .slate, .main:
                let video = info.video.map { FrameInput.VideoFormat(width: $0.width, height: $0.height, frameRate: $0.frameRate > 0 ? $0.frameRate : 25) }
                    ?? FrameInput.VideoFormat(width: 320, height: 240, frameRate: 25)
                // Black only where the push has pictures: an audio-only push has no encode for them.
                return try StillInput(image: nil, video: video, audio: info.audio.map { .init(sampleRate: $0.sampleRate, channels: $0.channels) },
                                      duration: nil, options: fillOptions, blackWithoutImage: info.video != nil)
            }
        }
        return BreakSetup(director: director, open: { fill in OpeningInput.start { () throws(LivePushError) in try open(fill) } },
                          report: { [weak self] error in self?.report(error) })
    }

    /// An `out` point past the end of any file (seconds).
    static let wholeFile = 1e9

    /// Fills are made like the main input: encoded at its size, rate and sample rate when it is
    /// encoded, else copied where they can be (a new sequence header marks a different format).
    private func breakFillOptions(for info: StreamInfo, encodesVideo: Bool) -> MediaSourceOptions {
        var options = mediaOptions
        if encodesVideo, let video = info.video {
            options.forceTranscode = true
            options.outputSize = VideoSize(width: video.width, height: video.height)
            if video.frameRate > 0 { options.frameRate = video.frameRate }
        }
        options.audioSampleRate = info.audio?.sampleRate
        return options
    }
}
