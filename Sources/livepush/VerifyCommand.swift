import ArgumentParser
import LivePush

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check a push URL's auth_key as the server would, and say why it is or is not valid.",
        discussion: """
        Prints one line: 'valid: expires ... UTC (in N s)', or 'invalid: ' and the reason \
        (no auth_key, malformed, hash mismatch, expired N s ago). \
        Exit status: 0 when valid, 1 when invalid or not a push URL, 64 for bad usage. \
        The key can also come from the LIVEPUSH_AUTH_KEY environment variable.
        """
    )

    @Argument(help: "The signed rtmp:// or rtmps:// push URL.")
    var url: String

    @Option(help: "The private key (default: $LIVEPUSH_AUTH_KEY).")
    var key: String?

    @Option(help: "What TIMESTAMP means: 'expiry' (the expiry time) or 'issued' (the signing time; needs --validity).")
    var timestamp: AuthTimestampOption = .expiry

    @Option(help: "With --timestamp issued: seconds a URL stays valid after TIMESTAMP.")
    var validity: Int64?

    @Option(help: "Seconds of clock difference to tolerate after the expiry.")
    var skew: Int64 = 0

    @Option(help: "Verify as if the current time were this Unix second.")
    var now: Int64?

    func validate() throws {
        if timestamp == .issued {
            guard let validity else { throw ValidationError("--timestamp issued needs --validity SECONDS") }
            guard validity > 0 else { throw ValidationError("--validity must be a positive number of seconds") }
        } else if validity != nil {
            throw ValidationError("--validity only applies with --timestamp issued")
        }
        guard skew >= 0 else { throw ValidationError("--skew must not be negative") }
        _ = try AuthCommandSupport.privateKey(key)
    }

    func run() throws {
        let signer = AuthKeySigner(
            privateKey: try AuthCommandSupport.privateKey(key),
            timestampMeaning: timestamp.meaning(validity: validity ?? 0))
        let current = now ?? SystemWallClock().now
        let verdict: AuthVerification
        do {
            verdict = try signer.verify(url, now: current, allowedSkew: .seconds(skew))
        } catch {
            throw AuthCommandSupport.fail(error)
        }
        Console.line(verdict.explanation(now: current))
        if !verdict.isValid { throw ExitCode.failure }
    }
}
