import ArgumentParser
import FoundationEssentials
import LivePush

struct PlayoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "playout",
        abstract: "Play a schedule (content clips, ads, pods) as one continuous stream.",
        discussion: """
        The schedule is JSON (see docs/playout-and-cues.md); source paths are relative to \
        the schedule file. A bad schedule is refused before anything is pushed: error \
        805504001 [0x30030401] scheduleInvalid names the entry and the field. An entry that \
        cannot be played is replaced by the slate for its duration and the channel goes on. \
        Exit status: 0 when the timeline played to its end, 1 when the push failed, 64 for bad usage.
        """
    )

    @Argument(help: "The schedule (JSON).")
    var schedule: String

    @Argument(help: "rtmp:// or rtmps:// URLs, srt://HOST:PORT, or HLS: file:///DIR/NAME.m3u8, or https://ORIGIN/DIR/NAME.m3u8 uploaded with PUT (with its breaks as cue tags; ?hls_time=SECONDS&hls_list_size=N); several push the same channel to each.")
    var urls: [String] = []

    @Flag(help: "Push as fast as the server accepts instead of in real time.")
    var fast = false

    @Flag(help: "Copy mode: send the clips' H.264/AAC as they are (cuts on keyframes) instead of encoding every entry at the channel's format.")
    var copy = false

    @Option(help: "The channel's picture size (encode mode), WIDTHxHEIGHT.")
    var size = "1280x720"

    @Option(name: .customLong("frame-rate"), help: "The channel's frames per second (encode mode).")
    var frameRate = 25.0

    @Option(name: .customLong("sample-rate"), help: "The channel's audio sample rate (encode mode): 44100 or 48000.")
    var sampleRate = 44_100

    @Option(help: "The image shown (with silence) in place of an entry that cannot be played; default black.")
    var slate: String?

    @Option(help: "Also write the channel to this local FLV file.")
    var record: String?

    @Option(name: .customLong("video-bitrate"), help: "Video bitrate in kbit/s.")
    var videoBitrate: Int?

    @Flag(help: "Print one JSON object per event per line on standard output.")
    var json = false


    @Option(name: .customLong("cue-preroll"), help: "Seconds ahead of a break its first cue goes out.")
    var cuePreroll: Double = 4

    @Option(help: "Serve the timeline controls (schedule-now, skip, append) over HTTP with JSON on HOST:PORT, e.g. 127.0.0.1:8089 (port 0: any free port; the address is printed).")
    var control: String?

    @Option(name: .customLong("control-token"), help: "The bearer token --control asks for (Authorization: Bearer TOKEN); default: the LIVEPUSH_CONTROL_TOKEN environment variable. Required when --control is not a loopback address.")
    var controlToken: String?

    @Option(help: ArgumentHelp("Keep the channel's programme guide (XMLTV) in this file, rewritten (atomically) when the channel starts and when its schedule changes through --control.", valueName: "FILE.xml"))
    var epg: String?

    @Option(name: .customLong("as-run"), help: ArgumentHelp("Append the as-run log to this file: one JSON line per item that aired, written as it ends.", valueName: "FILE.jsonl"))
    var asRun: String?

    @Option(name: .customLong("epg-channel"), help: "The channel's id and name in the guide.")
    var epgChannel = "livepush"

    @OptionGroup(title: "Cues, breaks and blackouts")
    var cues: CueOptions

    @OptionGroup(title: "Server verification (rtmps://)")
    var serverTrust: ServerTrustOptions

    @OptionGroup(title: "Loudness (re-encodes the audio)")
    var loudness: LoudnessOptions

    @Option(name: .customLong("hls-token"), help: ArgumentHelp(
        "The bearer token of the HLS outputs that upload (https://…/NAME.m3u8), sent to that origin only, over https:// only; default: the LIVEPUSH_HLS_TOKEN environment variable. Never printed.",
        valueName: "TOKEN"))
    var hlsToken: String?

    func validate() throws {
        if urls.isEmpty && record == nil { throw ValidationError("give at least one URL or --record FILE.flv") }
        guard parsedSize != nil else { throw ValidationError("--size must be WIDTHxHEIGHT with even numbers") }
        if !(frameRate > 0 && frameRate <= 120) { throw ValidationError("--frame-rate must be between 0 and 120") }
        if ![44_100, 48_000].contains(sampleRate) { throw ValidationError("--sample-rate must be 44100 or 48000") }
        if control != nil && controlAddress == nil { throw ValidationError("--control must be HOST:PORT") }
        if !(cuePreroll >= 0 && cuePreroll <= 3600) { throw ValidationError("--cue-preroll must be seconds from 0 to 3600") }
        if epgChannel.isEmpty || epgChannel.count > 64 { throw ValidationError("--epg-channel must be 1 to 64 characters") }
    }

    /// The token --control asks for: the option, else the environment's (an empty one is none).
    private var token: String? {
        let token = controlToken ?? ProcessInfo.processInfo.environment["LIVEPUSH_CONTROL_TOKEN"]
        return token?.isEmpty == false ? token : nil
    }

    private var controlAddress: (host: String, port: Int)? {
        guard let control, let colon = control.lastIndex(of: ":"), let port = Int(control[control.index(after: colon)...]),
              (0...65_535).contains(port) else { return nil }
        let host = String(control[..<colon])
        return (host.isEmpty ? "127.0.0.1" : host, port)
    }

    private var parsedSize: (width: Int, height: Int)? {
        let parts = size.split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts[0] > 0, parts[1] > 0, parts[0] % 2 == 0, parts[1] % 2 == 0 else { return nil }
        return (parts[0], parts[1])
    }

    func run() async throws {
        let plan: PlayoutSchedule
        var root: MediaRoot?
        let exports: ScheduleExports
        do throws(LivePushError) {
            exports = try ScheduleExports(channelID: epgChannel, guidePath: epg, asRunPath: asRun)
            guard FileManager.default.fileExists(atPath: schedule) else { throw LivePushError(.fileNotFound, schedule) }
            plan = try PlayoutSchedule(contentsOfFile: schedule)
            if let address = controlAddress {
                try ControlAccessPolicy.checkBinding(host: address.host, token: token)
                root = try MediaRoot(URL(fileURLWithPath: schedule).deletingLastPathComponent().path)
            }
        } catch {
            throw failure(error, json: json)
        }
        var options = PlayoutOptions()
        (options.width, options.height) = parsedSize ?? (1280, 720)
        options.frameRate = frameRate
        options.sampleRate = sampleRate
        options.copy = copy
        options.slateImage = slate
        options.media.videoBitrateKbps = videoBitrate

        var config = PushConfig()
        config.pacing = fast ? .asFastAsPossible : .realTime
        config.recordPath = record
        config.statsInterval = .zero
        cues.apply(to: &config)
        config.cuePreroll = .milliseconds(Int64(max(0, cuePreroll) * 1000))
        serverTrust.apply(to: &config)
        loudness.apply(to: &config)
        config.hlsToken = hlsToken ?? ProcessInfo.processInfo.environment["LIVEPUSH_HLS_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        var targets = urls
        var sink: EmbeddedReceiver?
        if targets.isEmpty {
            // Only a recording asked for: an embedded receiver takes the network side.
            let receiver = try EmbeddedReceiver.start(recordDirectory: nil)
            sink = receiver
            targets = [receiver.url]
        }
        defer { sink?.stop() }

        let pusher = LivePusher(config: config)
        let events = pusher.events()
        let playout: PlayoutControl
        do {
            playout = try pusher.start(playout: plan, options: options, urls: targets)
        } catch {
            throw failure(error, json: json)
        }
        let server = controlAddress.flatMap { address in root.map { (address, $0) } }.map { address, root in
            let json = json
            let server = PlayoutControlServer(control: playout, root: root, token: token, exports: exports)
            return Task {
                do {
                    try await server.run(host: address.host, port: address.port) { port in
                        let url = "http://\(address.host):\(port)"
                        emitLine(json ? JSONValue.object([("event", .string("controlListening")), ("url", .string(url))]).encoded
                                      : "[info] control endpoint listening on \(url)")
                    }
                } catch {
                    Console.error("livepush: the control endpoint on \(address.host):\(address.port) failed: \(error)\n")
                    try? pusher.stop()
                }
            }
        }
        defer { server?.cancel() }
        let interrupt = InterruptHandler { try? pusher.stop() }
        defer { interrupt.cancel() }
        let started = ContinuousClock.now
        // Nobody is there to call `reconnect()` once the retries are used up: that ends the channel.
        var retriesUsedUp: LivePushError?
        for await event in events {
            if case .reconnectFailed(let error) = event, retriesUsedUp == nil {
                retriesUsedUp = error
                try? pusher.stop()
            }
            if case .playout(let change) = event, let error = exports.handle(change, control: playout) {
                emitLine(json ? JSONValue.object([("event", .string("exportFailed")), ("error", EventFormatter.json(error))]).encoded
                              : "[warning] \(error.code.rawValue) [\(error.code.hex)] \(error.message)")
            }
            if case .stateChanged = event { continue }
            emitLine(json ? EventFormatter.json(event, at: ContinuousClock.now - started) : EventFormatter.text(event))
        }
        if case .failed(let error) = pusher.state { throw failure(error, json: json) }
        if let retriesUsedUp { throw failure(retriesUsedUp, json: json) }
    }
}

