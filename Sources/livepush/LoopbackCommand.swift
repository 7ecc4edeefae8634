import ArgumentParser
import LivePushLoopback

/// `livepush loopback`: a fault-injecting RTMP endpoint, or SRT relay, for testing how an app handles errors.
struct LoopbackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loopback",
        abstract: "Run a fault-injecting loopback: terminate RTMP locally or relay to a server (RTMP or SRT), and inject faults.",
        discussion: """
        Each --fault is FAULT[=ARG][@WHEN[,WHEN...]].
        FAULT: \(FaultSpec.faultNames.joined(separator: ", ")).
        WHEN: conn=K, conn=K-M, conn=K- (connections counted from 1), after=DURATION (since the \
        connection was accepted), at=DURATION (since the loopback started), messages=N (RTMP \
        messages from the client). SIZE: bytes, or with k / m (x1024 / x1048576). DURATION: 200ms, 2s.
        Examples: refuse@conn=1-2 (fail twice, then succeed), reset-after-bytes=200k@conn=1, \
        stall@after=1s, throttle=64k, latency=200ms, reject-publish=already, reset@messages=50, \
        reconnect-request=/moved@after=5s (an Enhanced RTMP v2 reconnect request, to the app moved).
        SRT: --srt-listen PORT --srt-upstream HOST:PORT relays SRT's UDP datagrams to a real SRT \
        listener, each caller on a socket of its own, and --fault takes an SRT fault: \
        \(SRTFaultSpec.faultNames.joined(separator: ", ")), with the same WHEN (conn=K counts \
        callers, after= runs from a caller's first packet, packets=N counts its data packets). \
        Examples: refuse@conn=1, drop@conn=1,after=2s, stall=2s@after=2s, loss=5%.
        Events are printed one per line; Ctrl-C stops.
        """
    )

    @Option(help: "RTMP: port to listen on (0 picks a free one).")
    var listen: Int?

    @Option(help: "Listen address; loopback by default.")
    var host = "127.0.0.1"

    @Option(help: "Relay to this RTMP server (HOST:PORT or rtmp://HOST[:PORT]/...). Without it the loopback answers RTMP itself.")
    var upstream: String?

    @Option(help: "Without --upstream: directory for FLV recordings (one file per stream name).")
    var record: String?

    @Option(name: .customLong("srt-listen"), help: "SRT: UDP port to listen on (0 picks a free one), relaying to --srt-upstream.")
    var srtListen: Int?

    @Option(name: .customLong("srt-upstream"), help: "SRT: the SRT listener to relay to (HOST:PORT or srt://HOST:PORT).")
    var srtUpstream: String?

    @Option(name: .customLong("fault"), help: "A fault to inject (repeatable); see below.")
    var faults: [String] = []

    func validate() throws {
        switch (listen, srtListen) {
        case (nil, nil): throw ValidationError("give --listen PORT (RTMP) or --srt-listen PORT (SRT)")
        case (.some, .some): throw ValidationError("--listen (RTMP) and --srt-listen (SRT) run apart: give one")
        case (let port?, nil), (nil, let port?):
            if port < 0 || port > 65_535 { throw ValidationError("the listen port must be a port number (0 picks a free one)") }
        }
        if srtListen != nil {
            guard let srtUpstream else { throw ValidationError("--srt-listen relays to a real SRT listener: give --srt-upstream HOST:PORT") }
            if upstream != nil || record != nil { throw ValidationError("--upstream and --record are RTMP's; SRT relays to --srt-upstream") }
            if srtUpstream.isEmpty { throw ValidationError("--srt-upstream needs HOST:PORT") }
            for spec in faults {
                do { _ = try SRTFaultSpec.parse(spec) } catch { throw ValidationError("\(error)") }
            }
            return
        }
        if srtUpstream != nil { throw ValidationError("--srt-upstream goes with --srt-listen") }
        for spec in faults {
            do { _ = try FaultSpec.parse(spec) } catch { throw ValidationError("\(error)") }
        }
        if upstream != nil, record != nil {
            throw ValidationError("--record only applies without --upstream (the upstream server records in relay mode)")
        }
    }

    func run() async throws {
        if let srtListen, let srtUpstream { return try await runSRT(port: srtListen, upstream: srtUpstream) }
        let listen = listen ?? 0
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

    /// `--srt-listen`: the SRT relay, until Ctrl-C.
    private func runSRT(port: Int, upstream: String) async throws {
        var rules: [SRTFaultRule] = []
        for spec in faults {
            do { rules.append(try SRTFaultSpec.parse(spec)) } catch { throw ValidationError("\(error)") }
        }
        let relay = SRTRelay(configuration: .init(host: host, port: port, upstream: upstream, faults: rules))
        let events = relay.makeEventStream()
        let bound: Int
        do {
            bound = try relay.start()
        } catch {
            Console.error("livepush: cannot start the SRT relay on \(host):\(port): \(error)\n")
            throw ExitCode.failure
        }
        let interrupt = InterruptHandler { relay.stop() }
        defer { interrupt.cancel() }
        Console.line("loopback listening on srt://\(host):\(bound), relaying to \(upstream)")
        Console.line(rules.isEmpty ? "faults: none" : "faults: " + rules.map(\.description).joined(separator: " "))
        for await event in events {
            Console.line(event.description)
        }
    }
}
