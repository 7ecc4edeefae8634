import ArgumentParser
import LivePush

/// Cue options of `livepush push` and `livepush playout`: how cues go out, which cues read
/// from the input count, and what fills the opportunities they open.
struct CueOptions: ParsableArguments {
    @Option(name: .customLong("cue-format"),
            help: ArgumentHelp("How breaks and passed-on cues are sent in the stream: adcue (onAdCue, SCTE-35), elemental or youtube (onCuePoint); in an HLS playlist: hls (all three tags, what an HLS output writes unless given one of its own), cue-out, oatcls or daterange; a comma-separated list gives one per URL, in order (the recording takes the first).",
                               valueName: "FORMAT[,FORMAT...]"))
    var cueFormat: CueFormatList = CueFormatList(formats: [.adCue])

    @Option(help: ArgumentHelp("A blackout known in advance: START+SECONDS, START being seconds of the stream or an ISO 8601 time (repeatable).",
                               valueName: "START+SECONDS"))
    var blackout: [String] = []

    @Option(help: ArgumentHelp("Alternate content for blackouts and, by default, for the opportunities the input's cues open.",
                               valueName: "PATH"))
    var alternate: String?

    @Option(help: ArgumentHelp("Which cues open opportunities: a comma-separated list of splice_insert, break, provider_po, distributor_po, provider_ad, distributor_ad, blackout, 0xNN (a segmentation start type) or blackout:0xNN. Default: splice_insert,break,provider_po,distributor_po,blackout. An HLS input's tags may be named too (#EXT-OATCLS-SCTE35, #EXT-X-CUE-OUT, #EXT-X-DATERANGE): then only those are read (default: all).",
                               valueName: "LIST"))
    var subscribe: String?

    @Option(name: .customLong("break-fallback"),
            help: "What fills an ad break no resolver filled: alternate, slate or main (default: alternate with --alternate, else main).")
    var breakFallback: BreakOptions.Fallback?

    @Flag(name: .customLong("no-source-cues"), help: "Do not pass the input's own cues on.")
    var noSourceCues = false

    func validate() throws {
        if let subscribe {
            do {
                _ = try CueSubscription(parsing: subscribe)
            } catch {
                throw ValidationError(error.description)
            }
        }
        for window in blackout {
            do {
                _ = try BlackoutWindow(parsing: window)
            } catch {
                throw ValidationError(error.description)
            }
        }
        if breakFallback == .alternate && alternate == nil {
            throw ValidationError("--break-fallback alternate needs --alternate PATH")
        }
    }

    func apply(to config: inout PushConfig) {
        config.cueFormat = cueFormat.formats[0]
        config.outputCueFormats = cueFormat.formats.count > 1 ? cueFormat.formats : []
        config.breaks.blackouts = blackout.compactMap { try? BlackoutWindow(parsing: $0) }
        config.breaks.alternate = alternate
        config.breaks.fallback = breakFallback
        config.breaks.passSourceCues = !noSourceCues
        if let subscribe, let subscription = try? CueSubscription(parsing: subscribe) {
            config.breaks.subscription = subscription
        }
    }
}

/// `--cue-format adcue` or `--cue-format adcue,elemental` (one per URL).
struct CueFormatList: ExpressibleByArgument {
    var formats: [CueFormat]

    init(formats: [CueFormat]) {
        self.formats = formats
    }

    init?(argument: String) {
        let formats = argument.split(separator: ",", omittingEmptySubsequences: false).map { CueFormat(rawValue: String($0)) }
        guard !formats.isEmpty, !formats.contains(nil) else { return nil }
        self.formats = formats.compactMap { $0 }
    }

    var defaultValueDescription: String { formats.map(\.rawValue).joined(separator: ",") }
}
extension BreakOptions.Fallback: ExpressibleByArgument {}
