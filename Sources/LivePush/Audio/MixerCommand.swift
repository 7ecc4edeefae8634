/// A change to the music, the effects or the volumes, applied by ``AudioMixer/apply(_:)``.
/// The app's calls (``LivePusher/startBGM(source:loop:)`` and the rest) become these.
enum MixerCommand: Sendable {
    /// Replaces the music playing now (`bgmStopped` for it); opening happens in the background.
    case startBGM(source: String, loop: Bool, timeout: Duration)
    case stopBGM
    /// Throws `invalidState` when no music plays, or it already is (or is not) paused.
    case setBGMPaused(Bool)
    /// 0...100, clamped.
    case setBGMVolume(Int)
    /// 0...100, clamped.
    case setSourceVolume(Int)
    case setSourceMuted(Bool)
    /// One effect per id; the same id again restarts it.
    case playEffect(id: Int, source: String, volume: Int, loop: Bool, timeout: Duration)
    case stopEffect(id: Int)
    case stopAllEffects
}
