import ArgumentParser
import LivePush

/// Background music options of `livepush push`. Music makes the push re-encode its audio
/// (mixing mode); a video-only file gets an audio track that carries the music.
struct BGMOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Background music mixed into the audio: a local file or an http(s) URL.",
                               valueName: "PATH|URL"))
    var bgm: String?

    @Option(name: .customLong("bgm-volume"), help: "Background music volume, 0-100.")
    var bgmVolume = 50

    @Flag(name: .customLong("bgm-loop"), help: "Play the background music in a loop.")
    var bgmLoop = false

    // Unconditional: `--source-volume -5` is then refused for its range, not as "Missing value".
    @Option(name: .customLong("source-volume"), parsing: .unconditional, help: "Volume of the file's own audio, 0-100 (re-encodes the audio).")
    var sourceVolume: Int?

    @Option(name: .customLong("bgm-timeout"), help: "Seconds an http(s) BGM may stall before bgmDownloadTimeout.")
    var bgmTimeout: Double?

    func validate() throws {
        if !(0...100).contains(bgmVolume) { throw ValidationError("--bgm-volume must be between 0 and 100") }
        if let v = sourceVolume, !(0...100).contains(v) { throw ValidationError("--source-volume must be between 0 and 100") }
        if let t = bgmTimeout, !(t > 0) { throw ValidationError("--bgm-timeout must be positive") }
        if bgm == nil && (bgmLoop || bgmTimeout != nil) { throw ValidationError("--bgm-loop and --bgm-timeout need --bgm") }
    }

    func apply(to config: inout PushConfig) {
        // A source volume other than 100 needs the audio decoded even without music.
        if sourceVolume != nil { config.media.audioMixing = true }
        if let bgmTimeout { config.bgmDownloadTimeout = .milliseconds(Int64(bgmTimeout * 1000)) }
    }

    /// Starts the music before the push, so that the push begins with it.
    func start(on pusher: LivePusher) throws(LivePushError) {
        pusher.bgmVolume = bgmVolume
        if let sourceVolume { pusher.sourceVolume = sourceVolume }
        if let bgm { try pusher.startBGM(source: bgm, loop: bgmLoop) }
    }

    /// The progress bar's BGM part: position / duration from the latest `bgmProgress`.
    static func status(_ event: PushEvent) -> String? {
        guard case .bgmProgress(let position, let duration) = event else { return nil }
        let total = duration > .zero ? "/" + EventFormatter.clock(duration.nanosecondsValue / 1000) : ""
        return " bgm " + EventFormatter.clock(position.nanosecondsValue / 1000) + total
    }
}
