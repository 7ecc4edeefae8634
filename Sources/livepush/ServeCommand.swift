import ArgumentParser
import LivePush
import LivePushLoopback

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the embedded RTMP receiver on 127.0.0.1 and record what is published to it.",
        discussion: """
        Every peer is bounded (docs/operators-guide.md, "The embedded receiver's limits"): a connection must finish \
        its handshake in --handshake-timeout and is closed after --idle-timeout without a byte; at \
        --max-connections a new connection replaces the oldest one still in its handshake, or is \
        refused. Each limit reached prints a line; at the end a line counts them. SIGINT and SIGTERM \
        stop gracefully (open recordings are closed whole). A --host beyond loopback prints a warning: \
        anyone who reaches the port can publish unless a publish key is set (--publish-key, \
        --publish-key-file or LIVEPUSH_PUBLISH_KEY), which publishers then append to the stream \
        name as ?key=KEY.
        """
    )

    @Option(help: "Port to listen on (0 picks a free one).")
    var port = 1935

    @Option(help: "Directory for the FLV recordings (one file per stream name).")
    var record: String?

    @Option(help: "Listen address; loopback by default.")
    var host = "127.0.0.1"

    @Option(name: .customLong("max-connections"), help: "Connections open at once.")
    var maxConnections = RTMPReceiver.Limits().maxConnections

    @Option(name: .customLong("handshake-timeout"), help: "Seconds a connection has to finish the RTMP handshake.")
    var handshakeTimeout = 10.0

    @Option(name: .customLong("idle-timeout"), help: "Seconds without a byte from a peer before its connection is closed.")
    var idleTimeout = 60.0

    @Option(name: .customLong("publish-key"),
            help: "Secret every publish must carry as ?key=KEY after the stream name (visible in ps: prefer --publish-key-file).")
    var publishKey: String?

    @Option(name: .customLong("publish-key-file"), help: "File holding the publish key (its first line).")
    var publishKeyFile: String?

    func validate() throws {
        if port < 0 || port > 65_535 { throw ValidationError("--port must be a port number (0 picks a free one)") }
        if maxConnections < 1 { throw ValidationError("--max-connections must be at least 1") }
        for (name, seconds) in [("--handshake-timeout", handshakeTimeout), ("--idle-timeout", idleTimeout)]
        where !(seconds > 0 && seconds <= 86_400) {
            throw ValidationError("\(name) must be seconds, more than 0 and at most 86400")
        }
    }

    func run() async throws {
        var limits = RTMPReceiver.Limits()
        limits.maxConnections = maxConnections
        limits.handshakeTimeout = .milliseconds(Int64(handshakeTimeout * 1000))
        limits.idleTimeout = .milliseconds(Int64(idleTimeout * 1000))
        // A peer decides how large the messages it sends are (up to 16 MiB each): their buffers must
        // go back to the system when freed, not stay in the event loop thread's heap.
        FreedMemory.mapLargeBlocks()
        let sources = SecretSources(what: "publish key", optionName: "--publish-key", fileOptionName: "--publish-key-file",
                                    environmentVariable: "LIVEPUSH_PUBLISH_KEY", option: publishKey, file: publishKeyFile)
        let key = try sources.secret().map { secret throws(ValidationError) in
            guard let key = PublishKey(secret) else {
                throw ValidationError("the publish key must be letters, digits, '-', '.', '_' or '~'")
            }
            return key
        }
        if let warning = sources.commandLineWarning { Console.error(warning) }
        if !ListenHost.isLoopback(host) {
            // Said on every start, since the default is loopback: this was asked for, but may not be meant.
            Console.error("livepush: warning: --host \(TerminalText.escape(host, limit: 256)) is beyond loopback: anyone who reaches it "
                + (key == nil ? "can publish and fill the record directory; set a publish key (--publish-key-file, docs/operators-guide.md)\n"
                              : "can try to publish; only publishes with the publish key are accepted\n"))
        }
        let receiver = RTMPReceiver(configuration: .init(host: host, port: port, recordDirectory: record, publishKey: key,
                                                         limits: limits))
        let events = receiver.events
        let bound: Int
        do {
            bound = try receiver.start()
        } catch {
            Console.error("livepush: cannot listen on \(host):\(port): \(error)\n")
            throw ExitCode.failure
        }
        let interrupt = InterruptHandler { receiver.stop() }
        defer { interrupt.cancel() }
        Console.line("listening on rtmp://\(host):\(bound)/live/STREAM" + (key.map { "?key=\($0)" } ?? "")
            + (record.map { ", recording to \($0)" } ?? ""))
        for await event in events {
            switch event {
            // App and stream names, and what errors quote, are the peer's words: escaped.
            case .connected(let app, let remote): Console.line("connected \(remote) app=\(LoopbackEvent.peer(app))")
            case .publishStarted(let app, let stream): Console.line("publish started \(LoopbackEvent.peer(app))/\(LoopbackEvent.peer(stream))")
            case .publishEnded(let summary):
                Console.line("publish ended \(LoopbackEvent.peer(summary.app))/\(LoopbackEvent.peer(summary.stream)): " + summary.text)
            case .disconnected(let remote): Console.line("disconnected \(remote)")
            case .protocolError(let message): Console.line("protocol error: \(LoopbackEvent.peer(message))")
            case .limitReached(let limit, let remote): Console.line("limit \(limit.rawValue) reached by \(remote)")
            }
        }
        Console.line("limits reached: \(receiver.limitCounters())")
    }
}
