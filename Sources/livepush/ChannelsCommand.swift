import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import LivePush
import Logging

/// `livepush channels CONFIG.json`: many channels in one process, with the control API,
/// metrics and health endpoints on `control` (see docs/operators-guide.md, "Running channels").
struct ChannelsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "channels",
        abstract: "Run many channels (files looped, playout schedules) in one process, with a control API and metrics."
    )

    @Argument(help: "The channels' configuration (JSON).")
    var config: String

    @Option(help: "Serve the control API, /metrics, /healthz and /readyz on HOST:PORT (overrides the configuration's control; port 0: any free port, printed).")
    var control: String?

    @Option(name: .customLong("log-format"), help: "Log lines as text or json (one object per line, for log shippers).")
    var logFormat: LogFormat = .text

    enum LogFormat: String, ExpressibleByArgument, CaseIterable { case text, json }

    func run() async throws {
        let format = logFormat
        LoggingSystem.bootstrap { label in
            format == .json ? JSONLogHandler(label: label) as any LogHandler : StreamLogHandler.standardError(label: label)
        }
        let logger = Logger(label: "livepush.channels")
        let manager: ChannelManager
        let settings: ChannelsConfig
        do {
            settings = try Self.loadSettings(config, control: control)
            if let address = settings.control.flatMap(ChannelsConfig.hostAndPort) {
                try ControlAccessPolicy.checkBinding(host: address.host, token: settings.token)
            }
            manager = try ChannelManager(config: settings, logger: logger)
        } catch {
            Console.error("livepush: error \(error.code.rawValue) [\(error.code.hex)] \(error.code.name): \(error.message)\n")
            throw ExitCode(1)
        }
        manager.startAll()

        let stopped = AsyncStream<Void>.makeStream()
        let interrupt = SignalHandler(SIGINT) { stopped.continuation.yield() }
        let terminate = SignalHandler(SIGTERM) { stopped.continuation.yield() }
        // SIGHUP reads the configuration again; an error in it changes nothing (logged with its code).
        let reload: @Sendable () throws(LivePushError) -> ChannelReload = { [config, control] () throws(LivePushError) in
            try manager.reload(try Self.loadSettings(config, control: control))
        }
        let hangUp = SignalHandler(SIGHUP) {
            do throws(LivePushError) {
                _ = try reload()
            } catch {
                logger.error("configuration refused; the channels go on as they were", metadata: [
                    "event": "reloadRefused", "code": .stringConvertible(error.code.rawValue), "error": .string(error.message),
                ])
            }
        }
        defer {
            interrupt.cancel()
            terminate.cancel()
            hangUp.cancel()
        }
        var server: Task<Void, Never>?
        if let address = settings.control.flatMap(ChannelsConfig.hostAndPort) {
            let root = try settings.mediaRoot ?? MediaRoot(URL(fileURLWithPath: config).deletingLastPathComponent().path)
            let api = ChannelsControlServer(manager: manager, token: settings.token, root: root, reload: reload)
            server = Task {
                do {
                    try await api.run(host: address.host, port: address.port) { port in
                        let url = "http://\(address.host):\(port)"
                        logger.info("control API listening", metadata: ["event": "controlListening", "url": .string(url)])
                        // Standard output carries it for scripts (and port 0's choice).
                        emitLine(JSONValue.object([("event", .string("controlListening")), ("url", .string(url))]).encoded)
                    }
                } catch {
                    logger.critical("control API failed", metadata: ["event": "controlFailed", "error": .string("\(error)")])
                    stopped.continuation.yield()
                }
            }
        } else {
            // Without a control API nothing can be added: the process ends with its channels.
            Task {
                while !manager.allEnded { try? await Task.sleep(for: .milliseconds(200)) }
                stopped.continuation.yield()
            }
        }
        for await _ in stopped.stream { break }
        logger.info("stopping", metadata: ["event": "stopping"])
        await manager.stopAllAndWait()
        server?.cancel()
        let failed = manager.list.filter { $0.snapshot.status == .failed }
        if !failed.isEmpty && settings.control == nil { throw ExitCode(2) }
    }

    /// The configuration file as the command line and the environment complete it, checked.
    private static func loadSettings(_ config: String, control: String?) throws(LivePushError) -> ChannelsConfig {
        guard let data = FileManager.default.contents(atPath: config) else {
            throw LivePushError(.channelConfigInvalid, "\(config) does not exist or cannot be read")
        }
        var settings = try ChannelsConfig(json: data, relativeTo: URL(fileURLWithPath: config).deletingLastPathComponent().path)
        if let control { settings.control = control }
        if let token = ProcessInfo.processInfo.environment["LIVEPUSH_CONTROL_TOKEN"], !token.isEmpty { settings.token = token }
        try settings.validate()
        return settings
    }
}
