import ArgumentParser
import LivePushLoopback

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the embedded RTMP receiver on 127.0.0.1 and record what is published to it."
    )

    @Option(help: "Port to listen on (0 picks a free one).")
    var port = 1935

    @Option(help: "Directory for the FLV recordings (one file per stream name).")
    var record: String?

    @Option(help: "Listen address; loopback by default.")
    var host = "127.0.0.1"

    func run() async throws {
        let receiver = RTMPReceiver(configuration: .init(host: host, port: port, recordDirectory: record))
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
        Console.line("listening on rtmp://\(host):\(bound)/live/STREAM" + (record.map { ", recording to \($0)" } ?? ""))
        for await event in events {
            switch event {
            case .connected(let app, let remote): Console.line("connected \(remote) app=\(app)")
            case .publishStarted(let app, let stream): Console.line("publish started \(app)/\(stream)")
            case .publishEnded(let summary): Console.line("publish ended \(summary.app)/\(summary.stream): " + summary.text)
            case .disconnected(let remote): Console.line("disconnected \(remote)")
            case .protocolError(let message): Console.line("protocol error: \(message)")
            }
        }
    }
}
