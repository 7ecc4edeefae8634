import ArgumentParser
import LivePush

/// `--backup`, `--input-loss`, `--input-timeout`, `--input-return`: what a live input (a URL as
/// the input) does when its feed is lost.
struct LiveInputCLIOptions: ParsableArguments {
    @Option(help: "With a live input (rtmp://, srt://, http(s)://, udp://, rtp://): a file played, looped, while the feed is lost. Without it, the slate.")
    var backup: String?

    @Option(name: .customLong("input-loss"), help: "What fills the time a live feed is late until --input-timeout decides: repeat (the last frame), black or slate. Silence with each.")
    var inputLoss: InputLossFill = .repeatLastFrame

    @Option(name: .customLong("input-timeout"), help: "Seconds without media after which a live input is lost (the backup or the slate goes on air while it is retried).")
    var inputTimeout: Double = 3

    @Option(name: .customLong("input-return"), help: "Seconds a lost live input must deliver steadily before the output switches back to it.")
    var inputReturn: Double = 2

    func validate() throws {
        if !(inputTimeout > 0 && inputTimeout <= 3600) { throw ValidationError("--input-timeout must be between 0 and 3600 seconds") }
        if !(inputReturn >= 0 && inputReturn <= 3600) { throw ValidationError("--input-return must be between 0 and 3600 seconds") }
    }

    func apply(to config: inout PushConfig) {
        config.liveInput.backup = backup
        config.liveInput.loss = inputLoss
        config.liveInput.timeout = .milliseconds(Int64(inputTimeout * 1000))
        config.liveInput.returnAfter = .milliseconds(Int64(inputReturn * 1000))
    }
}

extension InputLossFill: ExpressibleByArgument {}
