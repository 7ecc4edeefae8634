import ArgumentParser
import LivePush

/// Cue options of `livepush push` and `livepush playout`: how cues go out, which cues read
/// from the input count, and what fills the opportunities they open.
struct CueOptions: ParsableArguments {
    @Option(name: .customLong("cue-format"),
            help: "How breaks and passed-on cues are sent in the stream: adcue (onAdCue, SCTE-35), elemental or youtube (onCuePoint).")
    var cueFormat: CueFormat = .adCue

    @Option(help: ArgumentHelp("Alternate content for blackouts and, by default, for the opportunities the input's cues open.",
                               valueName: "PATH"))
    var alternate: String?

    @Option(help: ArgumentHelp("Which cues open opportunities: a comma-separated list of splice_insert, break, provider_po, distributor_po, provider_ad, distributor_ad, blackout, 0xNN (a segmentation start type) or blackout:0xNN. Default: splice_insert,break,provider_po,distributor_po,blackout.",
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
        if breakFallback == .alternate && alternate == nil {
            throw ValidationError("--break-fallback alternate needs --alternate PATH")
        }
    }

    func apply(to config: inout PushConfig) {
        config.cueFormat = cueFormat
        config.breaks.alternate = alternate
        config.breaks.fallback = breakFallback
        config.breaks.passSourceCues = !noSourceCues
        if let subscribe, let subscription = try? CueSubscription(parsing: subscribe) {
            config.breaks.subscription = subscription
        }
    }
}

extension CueFormat: ExpressibleByArgument {}
extension BreakOptions.Fallback: ExpressibleByArgument {}
