import ArgumentParser
import LivePushLoopback

/// `livepush loopback`: a fault-injecting RTMP endpoint for testing how an app handles errors.
struct LoopbackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loopback",
        abstract: "Run a fault-injecting RTMP loopback: terminate RTMP locally or relay to a server, and inject faults.",
        discussion: """
        Each --fault is FAULT[=ARG][@WHEN[,WHEN...]].
        FAULT: \(FaultSpec.faultNames.joined(separator: ", ")).
        WHEN: conn=K, conn=K-M, conn=K- (connections counted from 1), after=DURATION (since the \
        connection was accepted), at=DURATION (since the loopback started), messages=N (RTMP \
        messages from the client). SIZE: bytes, or with k / m (x1024 / x1048576). DURATION: 200ms, 2s.
        Examples: refuse@conn=1-2 (fail twice, then succeed), reset-after-bytes=200k@conn=1, \
        stall@after=1s, throttle=64k, latency=200ms, reject-publish=already, reset@messages=50.
        Events are printed one per line; Ctrl-C stops.
        """
    )

    @Option(help: "Port to listen on (0 picks a free one).")
    var listen: Int

    @Option(help: "Listen address; loopback by default.")
    var host = "127.0.0.1"

    @Option(help: "Relay to this RTMP server (HOST:PORT or rtmp://HOST[:PORT]/...). Without it the loopback answers RTMP itself.")
    var upstream: String?

    @Option(help: "Without --upstream: directory for FLV recordings (one file per stream name).")
    var record: String?

    @Option(name: .customLong("fault"), help: "A fault to inject (repeatable); see below.")
    var faults: [String] = []

    func validate() throws {
        if listen < 0 || listen > 65_535 { throw ValidationError("--listen must be a port number (0 picks a free one)") }
        for spec in faults {
            do { _ = try FaultSpec.parse(spec) } catch { throw ValidationError("\(error)") }
        }
        if upstream != nil, record != nil {
            throw ValidationError("--record only applies without --upstream (the upstream server records in relay mode)")
        }
    }

    func run() async throws {
        var rules: [FaultRule] = []
        for spec in faults {
            do { rules.append(try FaultSpec.parse(spec)) } catch { throw ValidationError("\(error)") }
        }
        let loopback = FaultLoopback(configuration: .init(
            host: host, port: listen, upstream: upstream, recordDirectory: record, faults: rules))
        let events = loopback.makeEventStream()
        let bound: Int
        do {
            bound = try loopback.start()
        } catch {
            Console.error("livepush: cannot start the loopback on \(host):\(listen): \(error)\n")
            throw ExitCode.failure
        }
        let interrupt = InterruptHandler { loopback.stop() }
        defer { interrupt.cancel() }
        var banner = "loopback listening on rtmp://\(host):\(bound)/APP/STREAM, "
        banner += upstream.map { "relaying to \($0)" } ?? "terminating RTMP" + (record.map { ", recording to \($0)" } ?? "")
        Console.line(banner)
        Console.line(rules.isEmpty ? "faults: none" : "faults: " + rules.map(\.description).joined(separator: " "))
        for await event in events {
            Console.line(event.description)
        }
    }
}
