import ArgumentParser
import LivePush
#if canImport(Glibc)
import Glibc
#endif

struct SignCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Add a type A auth_key to a push URL and print the signed URL.",
        discussion: """
        auth_key=TIMESTAMP-RAND-UID-HASH, HASH = md5("/app/stream-TIMESTAMP-RAND-UID-KEY"). \
        With --timestamp expiry (default) TIMESTAMP is the expiry time, now + --ttl; with \
        --timestamp issued it is the current time and --ttl is the validity period configured \
        for the domain. Other query parameters are kept; an existing auth_key is replaced. \
        The key can also come from the LIVEPUSH_AUTH_KEY environment variable (keeps it out of \
        the process list and shell history). The printed URL is a secret: anyone holding it can \
        publish until it expires.
        """
    )

    @Argument(help: "rtmp:// or rtmps:// push URL with app and stream name.")
    var url: String

    @Option(help: "The private key (default: $LIVEPUSH_AUTH_KEY).")
    var key: String?

    @Option(help: "Seconds the signed URL stays valid.")
    var ttl: Int64

    @Option(help: "What TIMESTAMP means: 'expiry' (the expiry time) or 'issued' (the signing time).")
    var timestamp: AuthTimestampOption = .expiry

    @Option(help: "RAND: 0, a UUID without hyphens, or 'uuid' for a random one.")
    var rand = "0"

    @Option(help: "UID.")
    var uid = "0"

    @Option(help: "Sign as if the current time were this Unix second.")
    var now: Int64?

    func validate() throws {
        guard ttl > 0 else { throw ValidationError("--ttl must be a positive number of seconds") }
        _ = try AuthCommandSupport.privateKey(key)
    }

    func run() throws {
        let signer = AuthKeySigner(
            privateKey: try AuthCommandSupport.privateKey(key),
            timestampMeaning: timestamp.meaning(validity: ttl))
        let current = now ?? SystemWallClock().now
        do {
            let signed = try signer.sign(
                url, expiresAt: current + ttl, rand: rand == "uuid" ? AuthKeySigner.randomRand() : rand, uid: uid)
            Console.line(signed)
        } catch {
            throw AuthCommandSupport.fail(error)
        }
    }
}

/// `--timestamp expiry|issued`
enum AuthTimestampOption: String, ExpressibleByArgument, CaseIterable {
    case expiry
    case issued

    func meaning(validity seconds: Int64) -> AuthTimestampMeaning {
        switch self {
        case .expiry: .expiry
        case .issued: .issuedAt(validity: .seconds(seconds))
        }
    }
}

enum AuthCommandSupport {
    static let keyVariable = "LIVEPUSH_AUTH_KEY"

    /// `--key`, else `$LIVEPUSH_AUTH_KEY`; a usage error when neither is set.
    static func privateKey(_ option: String?) throws -> String {
        if let option, !option.isEmpty { return option }
        if let value = getenv(keyVariable), let key = String(validatingCString: value), !key.isEmpty { return key }
        throw ValidationError("a private key is required: --key KEY or \(keyVariable)=KEY")
    }

    /// Prints the error the way `push` does and returns the exit status to throw.
    static func fail(_ error: LivePushError) -> ExitCode {
        Console.error("livepush: error \(error.code.rawValue) [\(error.code.hex)] \(error.code.name): \(error.message)\n")
        return ExitCode.failure
    }
}
