/// Background music, sound effects and the source ("capture") volume.
///
/// Music and effects are mixed into the push's audio as it is encoded (see ``AudioMixer``), so
/// the audio must be re-encoded: a push is in *mixing mode* when music or effects are playing at
/// `start`, or when ``MediaSourceOptions/audioMixing`` is set. In mixing mode copyable AAC is
/// decoded and re-encoded too, and a video-only source gets a generated audio track (silence
/// when no music plays), so the stream keeps one continuous audio track. A push that copies
/// its audio cannot mix: `startBGM` and `playAudioEffect` then throw `invalidState`.
///
/// Everything here can be called before a push (music started before `start` begins with it),
/// during one, and between pushes. Results arrive as events and on ``bgmDelegate``:
/// `bgmStarted` once the music is open, `bgmProgress` about once a second of pushed music,
/// `bgmCompleted` at the end of non-looping music, `bgmOpenFailed` (0x30010501) and
/// `bgmDownloadTimeout` (0x30010502) when it cannot play; the push goes on in every case.
extension LivePusher {
    /// Plays background music: a local file or an http(s) URL, in any format libavformat reads
    /// (MP3, AAC, WAV, FLAC, Opus, ...). Replaces the music playing now (`bgmStopped` for it).
    /// Opening happens in the background: watch `bgmStarted` / `bgmOpenFailed`.
    public func startBGM(source: String, loop: Bool = false) throws(LivePushError) {
        try checkCanMix("background music")
        try mixer.apply(.startBGM(source: source, loop: loop, timeout: config.bgmDownloadTimeout))
    }

    /// Stops the music (`bgmStopped`); nothing happens when none plays.
    public func stopBGM() {
        try? mixer.apply(.stopBGM)
    }

    /// Pauses the music where it is (`bgmPaused`). Throws `invalidState` when no music plays or
    /// it is already paused.
    public func pauseBGM() throws(LivePushError) {
        try mixer.apply(.setBGMPaused(true))
    }

    /// Continues paused music (`bgmResumed`). Throws `invalidState` when it is not paused.
    public func resumeBGM() throws(LivePushError) {
        try mixer.apply(.setBGMPaused(false))
    }

    /// Volume of the background music, 0 (silent) to 100 (as recorded); 50 by default. Values
    /// outside the range are clamped. Takes effect at the next audio frame.
    public var bgmVolume: Int {
        get { mixer.bgmVolume }
        set { try? mixer.apply(.setBGMVolume(newValue)) }
    }

    /// Volume of the source's own audio ("capture volume"), 0 to 100 (as recorded, the default).
    /// Only a push in mixing mode can change it; a stream-copied track is sent as it is.
    public var sourceVolume: Int {
        get { mixer.sourceVolume }
        set { try? mixer.apply(.setSourceVolume(newValue)) }
    }

    /// Silences the source's own audio; music and effects still play (mixing mode only).
    public var isSourceMuted: Bool {
        get { mixer.isSourceMuted }
        set { try? mixer.apply(.setSourceMuted(newValue)) }
    }

    /// Plays a short clip (a local file or an http(s) URL) over the music and the source, with
    /// its own `volume` (0-100). Several play at once, one per `id`; the same `id` again
    /// restarts it. A clip that cannot be opened is reported as `sdkError` with code
    /// `bgmOpenFailed`; a missing local file throws that at once. Each effect decodes on a
    /// thread of its own, so at most ``maxSimultaneousAudioEffects`` play at once; one more
    /// throws `invalidState`.
    public func playAudioEffect(id: Int, source: String, volume: Int = 50, loop: Bool = false) throws(LivePushError) {
        try checkCanMix("sound effects")
        let playing = playingAudioEffects
        if playing.count >= Self.maxSimultaneousAudioEffects && !playing.contains(id) {
            throw LivePushError(.invalidState, "\(playing.count) audio effects are playing; stop one first")
        }
        if !AudioFileDecoder.isNetworkSource(source) {
            var path = source
            if path.hasPrefix("file://") { path.removeFirst("file://".count) }
            guard !path.isEmpty, LocalFile.isReadable(path) else {
                throw LivePushError(.bgmOpenFailed, "audio effect \(id): \(Redaction.redactURL(source)): no such file")
            }
        }
        try mixer.apply(.playEffect(id: id, source: source, volume: volume, loop: loop, timeout: config.bgmDownloadTimeout))
    }

    /// Effects that can play at once (each has a decoding thread and a ~2 s buffer).
    public static let maxSimultaneousAudioEffects = 8

    /// Stops one effect; nothing happens when it is not playing.
    public func stopAudioEffect(id: Int) {
        try? mixer.apply(.stopEffect(id: id))
    }

    /// Stops every sound effect.
    public func stopAllAudioEffects() {
        try? mixer.apply(.stopAllEffects)
    }

    /// The ids of the effects playing now.
    public var playingAudioEffects: [Int] { mixer.playingEffects }

    /// Mixing needs an encoded audio track: refuse on a push that copies its audio.
    private func checkCanMix(_ what: String) throws(LivePushError) {
        switch state {
        case .connecting, .pushing, .paused, .reconnecting, .stopping:
            guard mixer.isAttached else {
                throw LivePushError(.invalidState, "this push copies its audio, so \(what) cannot be mixed in; "
                    + "start the music before the push, or set config.media.audioMixing = true")
            }
        default:
            break
        }
    }
}
