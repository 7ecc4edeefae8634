import Synchronization

/// Mixes background music and sound effects into a push's audio, with the BGM and source
/// ("capture") volumes and the source mute. One per ``LivePusher``, so music started before
/// `start` begins with the push, and it outlives pushes.
///
/// Threads: every change arrives as a ``MixerCommand`` (``apply(_:)``), from any thread, and
/// changes only the state below, under its lock;
/// each source decodes on a thread of its own (``AudioStreamPlayer``); the push's pipeline
/// thread calls ``process(_:)`` once per AAC frame (1024 samples) on the way to the push's one
/// AAC encoder, after the output clock (``AudioEncodeStage``), so mixing happens when audio is
/// pushed, over whatever input is on air, and the BGM's position is what was actually pushed.
final class AudioMixer: Sendable {
    struct BGM {
        let id: Int
        let player: AudioStreamPlayer
        var paused = false
        var opened = false
        /// Microseconds, 0 when unknown.
        var duration: Int64 = 0
        /// The (loop pass, whole second) last reported by `bgmProgress`.
        var lastProgress = (pass: -1, second: Int64(-1))
    }

    struct Effect {
        let id: Int
        let player: AudioStreamPlayer
        let gain: Float
    }

    struct State {
        var bgm: BGM?
        var effects: [Int: Effect] = [:]
        var bgmVolume = 50
        var sourceVolume = 100
        var sourceMuted = false
        /// The current push's format (the last one, between pushes).
        var format: AudioFormat?
        var nextID = 0
    }

    private let state = Mutex(State())
    private let limiter = Mutex(AudioLimiter())
    private let attached = Atomic<Int>(0)
    private let sink = Mutex<(@Sendable (PushEvent) -> Void)?>(nil)

    init() {}

    /// The pusher is gone: end the players' threads (one waiting for a push's format would
    /// otherwise wait forever).
    deinit {
        let players = state.withLock { s in (s.bgm.map { [$0.player] } ?? []) + s.effects.values.map(\.player) }
        for player in players { player.stop() }
    }

    func setReporter(_ report: @escaping @Sendable (PushEvent) -> Void) {
        sink.withLock { $0 = report }
    }

    private func report(_ events: [PushEvent]) {
        guard !events.isEmpty, let report = sink.withLock({ $0 }) else { return }
        for event in events { report(event) }
    }

    // MARK: - Pushes

    /// A push's sound encode (``AudioEncodeStage``, after the clock) announces itself when its
    /// encoder opens: from now on `process` runs on its frames. The lease ends with the stage,
    /// at the end of the push: one attach per push, whichever inputs go on air.
    func attach(format: AudioFormat) -> AudioMixerLease {
        attached.add(1, ordering: .relaxed)
        let (players, opening) = state.withLock { s -> ([AudioStreamPlayer], AudioStreamPlayer?) in
            s.format = format
            let opening = s.bgm.flatMap { $0.opened ? nil : $0.player }
            return ((s.bgm.map { [$0.player] } ?? []) + s.effects.values.map(\.player), opening)
        }
        for player in players { player.setFormat(format) }
        // Music started before the push begins with it: `process` mixes the BGM only once its
        // player reported it opened, which races the push's first frame (in `--fast`, 30 ms of
        // opening is half a second of media). A local file still opening is waited for, bounded,
        // as `mix` waits for a local decoder that is behind.
        opening?.awaitOpening(limit: AudioStreamPlayer.localWaitLimit)
        limiter.withLock { $0 = AudioLimiter() }
        return AudioMixerLease(mixer: self)
    }

    fileprivate func detach() { attached.subtract(1, ordering: .relaxed) }

    /// Whether a push is running whose audio goes through the mixer (encoded, not copied).
    var isAttached: Bool { attached.load(ordering: .relaxed) > 0 }

    /// Whether music or effects are playing: a push that starts now must mix.
    var hasSources: Bool { state.withLock { $0.bgm != nil || !$0.effects.isEmpty } }

    // MARK: - Commands

    func apply(_ command: MixerCommand) throws(LivePushError) {
        switch command {
        case .startBGM(let source, let loop, let timeout): startBGM(source: source, loop: loop, timeout: timeout)
        case .stopBGM: stopBGM()
        case .setBGMPaused(let paused): try setBGMPaused(paused)
        case .setBGMVolume(let volume): state.withLock { $0.bgmVolume = Self.clamp(volume) }
        case .setSourceVolume(let volume): state.withLock { $0.sourceVolume = Self.clamp(volume) }
        case .setSourceMuted(let muted): state.withLock { $0.sourceMuted = muted }
        case .playEffect(let id, let source, let volume, let loop, let timeout):
            playEffect(id: id, source: source, volume: volume, loop: loop, timeout: timeout)
        case .stopEffect(let id): state.withLock { $0.effects.removeValue(forKey: id) }?.player.stop()
        case .stopAllEffects: stopAllEffects()
        }
    }

    // MARK: - BGM

    private func startBGM(source: String, loop: Bool, timeout: Duration) {
        let (old, player) = state.withLock { s -> (AudioStreamPlayer?, AudioStreamPlayer) in
            s.nextID += 1
            let id = s.nextID
            let player = AudioStreamPlayer(source: source, loop: loop, timeout: timeout) { [weak self] notice in
                self?.bgmNotice(id: id, notice)
            }
            let old = s.bgm?.player
            s.bgm = BGM(id: id, player: player)
            return (old, player)
        }
        if let old {
            old.stop()
            report([.bgmStopped])
        }
        player.start(format: state.withLock { $0.format })
    }

    private func stopBGM() {
        guard let old = state.withLock({ s -> AudioStreamPlayer? in
            defer { s.bgm = nil }
            return s.bgm?.player
        }) else { return }
        old.stop()
        report([.bgmStopped])
    }

    private func setBGMPaused(_ paused: Bool) throws(LivePushError) {
        try state.withLock { (s: inout State) throws(LivePushError) in
            guard s.bgm != nil else { throw LivePushError(.invalidState, "no background music is playing") }
            guard s.bgm!.paused != paused else {
                throw LivePushError(.invalidState, paused ? "the background music is already paused" : "the background music is not paused")
            }
            s.bgm!.paused = paused
        }
        report([paused ? .bgmPaused : .bgmResumed])
    }

    private func bgmNotice(id: Int, _ notice: AudioStreamPlayer.Notice) {
        let event = state.withLock { s -> PushEvent? in
            guard s.bgm?.id == id else { return nil }  // stopped or replaced meanwhile
            switch notice {
            case .opened(let duration):
                s.bgm!.opened = true
                s.bgm!.duration = duration
                return .bgmStarted
            case .failed(let error):
                s.bgm = nil
                return error.code == .bgmDownloadTimeout ? .bgmDownloadTimeout(error) : .bgmOpenFailed(error)
            }
        }
        if let event { report([event]) }
    }

    // MARK: - Volumes

    var bgmVolume: Int { state.withLock { $0.bgmVolume } }
    var sourceVolume: Int { state.withLock { $0.sourceVolume } }
    var isSourceMuted: Bool { state.withLock { $0.sourceMuted } }

    static func clamp(_ volume: Int) -> Int { min(100, max(0, volume)) }

    // MARK: - Effects

    private func playEffect(id: Int, source: String, volume: Int, loop: Bool, timeout: Duration) {
        let player = AudioStreamPlayer(source: source, loop: loop, timeout: timeout) { [weak self] notice in
            self?.effectNotice(id: id, notice)
        }
        let (old, format) = state.withLock { s -> (AudioStreamPlayer?, AudioFormat?) in
            let old = s.effects[id]?.player
            s.effects[id] = Effect(id: id, player: player, gain: Float(Self.clamp(volume)) / 100)
            return (old, s.format)
        }
        old?.stop()
        player.start(format: format)
    }

    private func stopAllEffects() {
        for effect in state.withLock({ s -> [Effect] in
            defer { s.effects = [:] }
            return Array(s.effects.values)
        }) {
            effect.player.stop()
        }
    }

    var playingEffects: [Int] { state.withLock { $0.effects.keys.sorted() } }

    private func effectNotice(id: Int, _ notice: AudioStreamPlayer.Notice) {
        guard case .failed(let error) = notice else { return }
        let removed = state.withLock { s -> Bool in
            guard s.effects[id] != nil else { return false }
            s.effects[id] = nil
            return true
        }
        if removed { report([.sdkError(LivePushError(error.code, "audio effect \(id): \(error.detail ?? "")"))]) }
    }
}

extension AudioMixer {
    /// What one frame mixes, read under the lock and used outside it (a local player may wait
    /// for its decoder; the app's controls must not wait for that).
    private struct Plan {
        var sourceGain: Float
        var bgm: (id: Int, player: AudioStreamPlayer, gain: Float)?
        var effects: [Effect]
    }

    /// Mixes into one frame of the push's audio (planar float, the push's format): source
    /// volume or mute, then the BGM and every effect, then the limiter. With nothing to mix and
    /// the source at full volume the frame is left untouched.
    func process(_ frame: inout AudioFrame) throws(LivePushError) {
        let plan = state.withLock { s -> Plan in
            var bgm: (Int, AudioStreamPlayer, Float)?
            if let b = s.bgm, b.opened, !b.paused { bgm = (b.id, b.player, Float(s.bgmVolume) / 100) }
            return Plan(sourceGain: s.sourceMuted ? 0 : Float(s.sourceVolume) / 100, bgm: bgm,
                        effects: Array(s.effects.values))
        }
        let limiting = limiter.withLock { $0.gain < 1 }
        if plan.sourceGain == 1 && plan.bgm == nil && plan.effects.isEmpty && !limiting { return }
        if plan.sourceGain != 1 {
            for c in 0..<frame.channels {
                try AudioLimiter.mutate(&frame, c) { samples in
                    for i in 0..<samples.count { samples[i] *= plan.sourceGain }
                }
            }
        }
        var events: [PushEvent] = []
        if let bgm = plan.bgm {
            let outcome = try bgm.player.mix(into: &frame, gain: bgm.gain)
            events += bgmProgressed(id: bgm.id, outcome, rate: frame.sampleRate)
        }
        for effect in plan.effects {
            let outcome = try effect.player.mix(into: &frame, gain: effect.gain)
            if outcome.finished {
                state.withLock { s in
                    if s.effects[effect.id]?.player === effect.player { s.effects[effect.id] = nil }
                }
            }
        }
        try limiter.withLock { (l: inout AudioLimiter) throws(LivePushError) in try l.process(&frame) }
        report(events)
    }

    /// Progress when the mixed position crosses a whole second (or a loop restarts); completion when a non-looping
    /// source has been mixed to its end.
    private func bgmProgressed(id: Int, _ outcome: AudioStreamPlayer.Outcome, rate: Int) -> [PushEvent] {
        state.withLock { s -> [PushEvent] in
            guard var bgm = s.bgm, bgm.id == id else { return [] }
            if outcome.finished {
                s.bgm = nil
                return [.bgmCompleted]
            }
            let position = rate > 0 ? outcome.position * 1_000_000 / Int64(rate) : 0
            let second = position / 1_000_000
            guard (outcome.pass, second) != bgm.lastProgress, outcome.samples > 0 else { return [] }
            bgm.lastProgress = (outcome.pass, second)
            s.bgm = bgm
            return [.bgmProgress(position: .microseconds(position), duration: .microseconds(bgm.duration))]
        }
    }
}

/// Held by a push's audio encoder while it mixes; releasing it tells the mixer the push ended.
final class AudioMixerLease: Sendable {
    private let mixer: AudioMixer

    fileprivate init(mixer: AudioMixer) { self.mixer = mixer }

    deinit { mixer.detach() }
}
