import ArgumentParser
import Dispatch
import FoundationEssentials
import LivePush
import LivePushLoopback
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Push a local media file to an RTMP server.",
        discussion: """
        Without a URL the file goes to an embedded receiver started in this process on \
        127.0.0.1, which records what it received and prints a summary. \
        Exit status: 0 on success, 1 when the push failed (the error code and its sentence \
        are printed), 64 for bad usage.
        """
    )

    @Argument(help: "The media file (MP4, MOV, MKV, FLV, MPEG-TS, WebM, ...), - for standard input (any container ffmpeg can pipe: mpegts, flv, nut, matroska), or a live feed's URL (rtmp(s)://, srt://, http(s)://, udp://, rtp://; see --backup).")
    var file: String

    @Argument(help: "rtmp:// or rtmps:// URLs with app and stream name, srt://HOST:PORT, http(s):// WHIP endpoints, or file:///DIR/NAME.m3u8 (HLS: segments and playlist written in DIR, or uploaded with PUT to https://ORIGIN/DIR/NAME.m3u8; ?hls_time=SECONDS&hls_list_size=N, 0 keeps every segment, &hls_segment_type=fmp4 for CMAF); several push the same stream to each (simulcast). Omit to use the embedded receiver.")
    var urls: [String] = []

    @Flag(help: "Push as fast as the server accepts instead of in real time.")
    var fast = false

    @Option(help: "Push the file N times in total, or 'forever'.")
    var loop: LoopOption = LoopOption(value: .once)

    @Flag(help: "Print one JSON object per event per line on standard output.")
    var json = false

    @Flag(help: "Re-encode to H.264/AAC even when the codecs could be copied.")
    var transcode = false

    @Option(name: .customLong("video-bitrate"), help: "Video bitrate in kbit/s when transcoding.")
    var videoBitrate: Int?

    @Option(name: .customLong("audio-bitrate"), help: "Audio bitrate in kbit/s when transcoding.")
    var audioBitrate: Int?

    @Option(name: .customLong("audio-codec"), help: ArgumentHelp(
        "The codec RTMP outputs carry the sound in: aac (the default) or opus (Enhanced RTMP v2; FFmpeg 8, MediaMTX). SRT, HLS and the recording keep AAC; WHIP always carries Opus.",
        valueName: "aac|opus"))
    var audioCodec: AudioCodec?

    @Option(name: .customLong("retry-count"),
            help: "Reconnect attempts after a lost connection (0-100), or 'forever': retry until stopped, the first connect too, waiting from --retry-interval doubling up to 30 s with jitter.")
    var retryCount = RetryCountOption(value: 5)

    @Option(name: .customLong("retry-interval"), help: "Milliseconds before each reconnect attempt.")
    var retryInterval = 1000

    @Option(name: .customLong("stale-grace"),
            help: "Seconds to keep retrying while the server still holds the previous session ('already publishing').")
    var staleGrace: Double = 90

    @Option(name: .customLong("send-timeout"), help: "Milliseconds a write may block before the connection counts as lost.")
    var sendTimeout = 3000

    @Option(name: .customLong("auth-key"), help: ArgumentHelp(
        "Private key: sign the URL (auth_key) and re-sign it before it expires. Visible in the process list: prefer --auth-key-file or the LIVEPUSH_AUTH_KEY environment variable.",
        valueName: "KEY"))
    var authKey: String?

    @Option(name: .customLong("auth-key-file"), help: ArgumentHelp(
        "Read the --auth-key private key from this file (its trailing newline is dropped); default: the LIVEPUSH_AUTH_KEY environment variable. Sources that differ are refused.",
        valueName: "PATH"))
    var authKeyFile: String?

    @Option(name: .customLong("whip-token"), help: ArgumentHelp(
        "The bearer token of the WHIP (http(s)://) outputs; default: the LIVEPUSH_WHIP_TOKEN environment variable. Never printed.",
        valueName: "TOKEN"))
    var whipToken: String?

    @Option(name: .customLong("hls-token"), help: ArgumentHelp(
        "The bearer token of the HLS outputs that upload (https://…/NAME.m3u8), sent to that origin only, over https:// only; default: the LIVEPUSH_HLS_TOKEN environment variable. Never printed.",
        valueName: "TOKEN"))
    var hlsToken: String?

    @Option(name: .customLong("auth-ttl"), help: "Seconds each signed URL is valid (with --auth-key).")
    var authTTL = 3600

    @OptionGroup(title: "Video processing (decodes and re-encodes the video)")
    var video: VideoOptions

    @OptionGroup(title: "Background music (re-encodes the audio)")
    var music: BGMOptions

    @OptionGroup(title: "Loudness (re-encodes the audio)")
    var loudness: LoudnessOptions

    @OptionGroup(title: "Server verification (rtmps://)")
    var serverTrust: ServerTrustOptions

    @OptionGroup(title: "Cues, breaks and blackouts")
    var cues: CueOptions

    @OptionGroup(title: "Live input (a URL as the input)")
    var liveInput: LiveInputCLIOptions

    @Option(help: "Also write what is pushed to this local FLV file; it keeps recording while the network is down.")
    var record: String?

    @Option(name: .customLong("output-video"), parsing: .singleValue,
            help: ArgumentHelp("Give output ID (0 for the first URL) its own video, as ID=WxH@KBPS[/CODEC] (1=640x360@800, 0=1280x720@2500/hevc); repeatable. The same ID again makes a ladder: one variant per rendition (an HLS output: a master playlist).",
                               discussion: "Encoded once per distinct size, bitrate and codec (h264, hevc, av1) from one decode; other outputs carry the input's video. A ladder's variants have their keyframes at the same pictures; an RTMP output sends a ladder as Enhanced RTMP v2 multitrack video (--multitrack); SRT and WHIP outputs take one rendition.",
                               valueName: "ID=WxH@KBPS[/CODEC]"))
    var outputVideo: [String] = []

    @Option(name: .customLong("multitrack"), help: ArgumentHelp(
        "Which RTMP servers get an output's ladder as Enhanced RTMP v2 multitrack video: auto (those whose connect answer advertises it; the others get the first rendition and a warning) or always (every server, with a warning where it was not advertised: FFmpeg 8's listener reads it without saying so).",
        valueName: "auto|always"))
    var multitrack: RTMPMultitrack = .whenAdvertised

    @Option(name: .customLong("receiver-dir"),
            help: "Directory where the embedded receiver (no URL given) records (default: a temporary directory).")
    var receiverDirectory: String?

    @Option(name: .customLong("stats-interval"), help: "Seconds between statistics lines.")
    var statsInterval: Double?

    /// `--output-video` assignments by output id: an id given again adds a variant to its
    /// ladder, in the order given; the same rendition twice on one output is refused.
    static func outputRenditions(_ assignments: [String]) throws(LivePushError) -> [Int: [VideoRendition]] {
        var ladders: [Int: [VideoRendition]] = [:]
        for text in assignments {
            let (id, rendition) = try VideoRendition.parseAssignment(text)
            guard !(ladders[id] ?? []).contains(rendition) else {
                throw LivePushError(.outputSettingsInvalid, "--output-video gives output \(id) \(rendition) twice")
            }
            ladders[id, default: []].append(rendition)
        }
        return ladders
    }

    func validate() throws {
        if let v = videoBitrate, v <= 0 { throw ValidationError("--video-bitrate must be positive") }
        if let a = audioBitrate, a <= 0 { throw ValidationError("--audio-bitrate must be positive") }
        if case .times(let n) = loop.value, n < 1 { throw ValidationError("--loop must be at least 1 or 'forever'") }
        if file == "-" && loop.value != .once { throw ValidationError("--loop cannot be used with standard input (-): it can be read only once") }
        if retryCount.value != ReconnectPolicy.forever && !(0...100).contains(retryCount.value) { throw ValidationError("--retry-count must be between 0 and 100") }
        if authTTL <= 60 && authKeySources.isSet { throw ValidationError("--auth-ttl must exceed the 60 s refresh lead time") }
        if !(staleGrace >= 0 && staleGrace <= 86_400) { throw ValidationError("--stale-grace must be between 0 and 86400 seconds") }
        if retryInterval < 0 || sendTimeout <= 0 { throw ValidationError("--retry-interval and --send-timeout must be positive") }
    }

    /// `--auth-key`, `--auth-key-file` and `LIVEPUSH_AUTH_KEY`.
    private var authKeySources: SecretSources {
        SecretSources(what: "auth key", optionName: "--auth-key", fileOptionName: "--auth-key-file",
                      environmentVariable: AuthCommandSupport.keyVariable, option: authKey, file: authKeyFile)
    }

    func run() async throws {
        let privateKey = try authKeySources.secret()
        if let warning = authKeySources.commandLineWarning { Console.error(warning) }
        var config = PushConfig()
        config.pacing = fast ? .asFastAsPossible : .realTime
        config.looping = loop.value
        if retryCount.value == ReconnectPolicy.forever { config.retryForever() }
        config.connectRetryCount = retryCount.value
        config.connectRetryInterval = .milliseconds(retryInterval)
        config.staleSessionGrace = .milliseconds(Int64(staleGrace * 1000))
        config.recordPath = record
        config.sendDataTimeout = .milliseconds(sendTimeout)
        config.media.forceTranscode = transcode
        config.whipToken = whipToken ?? ProcessInfo.processInfo.environment["LIVEPUSH_WHIP_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        config.hlsToken = hlsToken ?? ProcessInfo.processInfo.environment["LIVEPUSH_HLS_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        if let videoBitrate { config.media.videoBitrateKbps = videoBitrate }
        if let audioBitrate { config.media.audioBitrateKbps = audioBitrate }
        if let audioCodec { config.media.audioCodec = audioCodec }
        video.apply(to: &config)
        music.apply(to: &config)
        loudness.apply(to: &config)
        liveInput.apply(to: &config)
        serverTrust.apply(to: &config)
        cues.apply(to: &config)
        do {
            config.outputVideoLadders = try Self.outputRenditions(outputVideo)
            config.rtmpMultitrack = multitrack
        } catch {
            throw fail(error)
        }
        let showProgress = !json && ProgressBar.isTerminal
        config.statsInterval = .milliseconds(Int64((statsInterval ?? (showProgress ? 0.5 : 2)) * 1000))

        var receiver: EmbeddedReceiver?
        var targets = urls
        if targets.isEmpty {
            do {
                let embedded = try EmbeddedReceiver.start(recordDirectory: receiverDirectory)
                receiver = embedded
                targets = [embedded.url]
                report("embedded receiver listening on \(embedded.url), recording to \(embedded.recordDirectory)")
            } catch {
                throw fail(LivePushError(.rtmpStartFailed, "embedded receiver: \(error)"))
            }
        }
        defer { receiver?.stop() }

        let pusher = LivePusher(config: config)
        do {
            for filter in try video.makeFilters() { try pusher.addFilter(filter) }
            for overlay in try video.makeOverlays() { try pusher.sendOverlayChange(.add(overlay)) }
        } catch {
            throw fail(error)
        }
        let events = pusher.events()
        do {
            try music.start(on: pusher)
        } catch {
            throw fail(error)
        }
        let signer = privateKey.map { AuthKeySigner(privateKey: $0) }
        do {
            let signed = try targets.map { target throws(LivePushError) in
                try signer?.sign(target, validFor: .seconds(authTTL)) ?? target
            }
            try pusher.start(file: file, urls: signed)
        } catch {
            throw fail(error)
        }
        let interrupt = InterruptHandler { try? pusher.stop() }
        defer { interrupt.cancel() }
        // SIGUSR1 toggles pause (with --pause-image, the image goes out meanwhile).
        let pauseToggle = SignalHandler(SIGUSR1) {
            if pusher.state == .paused { try? pusher.resume() } else { try? pusher.pause() }
        }
        defer { pauseToggle.cancel() }

        let started = ContinuousClock.now
        let bar = ProgressBar()
        var musicStatus = ""
        // The library waits for `reconnect()` after its retries are used up; the CLI has nobody
        // to call it, so that is the end of the push: stop, and exit 1 once `stopped` arrives.
        var retriesUsedUp: LivePushError?
        for await event in events {
            if case .reconnectFailed(let error) = event, retriesUsedUp == nil {
                retriesUsedUp = error
                try? pusher.stop()
            }
            if case .pushURLAuthenticationOverdue = event, let signer {
                // Re-sign: the next connect uses the new URL, the current stream goes on.
                do {
                    try pusher.refreshPushURL(signer.sign(targets[0], validFor: .seconds(authTTL)))
                } catch {
                    emitLine("[error] could not refresh the push URL: \(error.message)")
                }
            }
            if json {
                emitLine(EventFormatter.json(event, at: ContinuousClock.now - started))
            } else if showProgress, let status = BGMOptions.status(event) {
                musicStatus = status  // shown in the progress line, not a line per second
            } else if case .stats(let stats) = event {
                if showProgress {
                    Console.error("\r\u{1B}[2K" + bar.render(stats, loops: config.looping) + musicStatus)
                } else {
                    emitLine(EventFormatter.text(event))
                }
            } else if case .stateChanged = event {
                continue
            } else {
                if showProgress { Console.error("\r\u{1B}[2K") }
                emitLine(EventFormatter.text(event))
            }
        }
        if case .failed(let error) = pusher.state { throw fail(error) }
        if let retriesUsedUp {
            let code = fail(retriesUsedUp)
            Console.error("livepush: gave up reconnecting after --retry-count \(retryCount.value) attempts "
                          + "(--retry-interval \(retryInterval) ms) and --stale-grace \(staleGrace) s; raise them to keep trying longer\n")
            throw code
        }

        if let receiver {
            do {
                let summary = try await receiver.awaitSummary()
                if json {
                    emitLine(summary.json)
                } else {
                    emitLine(summary.text)
                }
            } catch {
                throw fail(LivePushError(.publishFailed, "the embedded receiver did not see the publish end: \(error)"))
            }
        }
    }

    private func report(_ message: String) {
        if json { return }
        emitLine(message)
    }

    private func fail(_ error: LivePushError) -> ExitCode { failure(error, json: json) }
}

func emitLine(_ line: String) { Console.line(line) }

/// Prints the error with its code (and, with `--json`, as a JSON line) and returns the exit
/// status to throw.
func failure(_ error: LivePushError, json: Bool) -> ExitCode {
    if json {
        emitLine(JSONValue.object([("event", .string("error")), ("error", EventFormatter.json(error))]).encoded)
    }
    Console.error("livepush: error \(error.code.rawValue) [\(error.code.hex)] \(error.code.name): \(error.message)\n")
    return ExitCode.failure
}

/// `--loop N` or `--loop forever`.
struct LoopOption: ExpressibleByArgument {
    let value: PushConfig.Looping

    init(value: PushConfig.Looping) { self.value = value }

    init?(argument: String) {
        if argument == "forever" || argument == "inf" {
            value = .forever
        } else if let n = Int(argument) {
            value = .times(n)
        } else {
            return nil
        }
    }

    var defaultValueDescription: String { "1" }
}

/// `--retry-count N` or `--retry-count forever`.
struct RetryCountOption: ExpressibleByArgument {
    let value: Int

    init(value: Int) { self.value = value }

    init?(argument: String) {
        if argument == "forever" {
            value = ReconnectPolicy.forever
        } else if let n = Int(argument) {
            value = n
        } else {
            return nil
        }
    }

    var defaultValueDescription: String { "\(value)" }
}

/// Runs a handler on a signal instead of the default action.
final class SignalHandler: Sendable {
    private let source: Mutex<any DispatchSourceSignal>

    init(_ number: Int32, _ handler: @escaping @Sendable () -> Void) {
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler(handler: handler)
        source.resume()
        self.source = Mutex(source)
    }

    func cancel() { source.withLock { $0.cancel() } }
}

/// Turns Ctrl-C (SIGINT) and SIGTERM (a service manager's stop) into a graceful stop: the
/// server finalises the stream, recordings are closed whole.
final class InterruptHandler: Sendable {
    private let handlers: [SignalHandler]

    init(_ body: @escaping @Sendable () -> Void) { handlers = [SignalHandler(SIGINT, body), SignalHandler(SIGTERM, body)] }

    func cancel() { handlers.forEach { $0.cancel() } }
}

extension AudioCodec: ExpressibleByArgument {}

extension RTMPMultitrack: ExpressibleByArgument {}
