import ArgumentParser
import LivePush
#if canImport(Glibc)
import Glibc
#endif

/// How `livepush push` checks an rtmps:// server: the system CAs unless told otherwise.
struct ServerTrustOptions: ParsableArguments {
    @Option(name: .customLong("ca-file"),
            help: ArgumentHelp("Trust the CA certificates in this PEM file instead of the system's (rtmps://).",
                               valueName: "PATH"))
    var caFile: String?

    @Flag(help: "Do not verify the rtmps:// server's certificate: anyone on the network path could read the stream key.")
    var insecure = false

    func validate() throws {
        if caFile != nil && insecure { throw ValidationError("--ca-file and --insecure exclude each other") }
        // A typo in the path is a usage error, found before anything connects.
        if let caFile, !Self.isReadableFile(caFile) { throw ValidationError("--ca-file \(caFile): no readable file there") }
    }

    func apply(to config: inout PushConfig) {
        config.tls = TLSOptions(caFile: caFile, verifyServer: !insecure)
        if insecure {
            Console.error("livepush: warning: --insecure: the server's certificate is not verified; "
                          + "whoever answers at that address gets the stream and its key\n")
        }
    }

    private static func isReadableFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && access(path, R_OK) == 0
    }
}
