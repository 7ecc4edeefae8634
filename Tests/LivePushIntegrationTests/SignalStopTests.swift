import Foundation
import LivePushWire
import XCTest

/// SIGTERM, as systemd and Kubernetes stop a service, ends every long-running command as Ctrl-C
/// does: `playout`, `channels`, `serve` and `loopback` (`push` is `RecordingEndTests`). Each exits
/// 0 within 5 s, and what it recorded is whole: its duration in the header, decodable to the end.
final class SignalStopTests: NginxTestCase {
    /// Sends SIGTERM and checks the exit: status 0, within 5 s.
    private func terminate(_ cli: RunningCLI, _ what: String) async {
        XCTAssertEqual(kill(cli.processIdentifier, SIGTERM), 0)
        let sent = ContinuousClock.now
        let status = await cli.awaitExit(timeout: .seconds(15))
        XCTAssertEqual(status, 0, "\(what): a requested stop exits 0: \(cli.standardError.suffix(500))")
        XCTAssertLessThan(ContinuousClock.now - sent, .seconds(5), "\(what) took too long to stop")
    }

    /// A local FLV that ended whole: decodes without an error, with its duration in `onMetaData`.
    private func assertWhole(_ path: String, atLeast seconds: Double, file: StaticString = #filePath, line: UInt = #line) throws {
        let decode = try ProcessRunner.run("ffmpeg", ["-v", "error", "-i", path, "-f", "null", "-"], timeout: 60)
        XCTAssertTrue(decode.succeeded && decode.stderrString.isEmpty, "\(path): \(decode.stderrString)", file: file, line: line)
        let tags = try FLVFileReader.tags(in: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        guard let metadata = tags.first(where: { $0.type == .script }), case .ecmaArray(let properties)? = try AMF0.decode(metadata.body).dropFirst().first,
              case .number(let duration)? = properties.first(where: { $0.key == "duration" })?.value else {
            return XCTFail("\(path): no duration in its onMetaData", file: file, line: line)
        }
        XCTAssertGreaterThanOrEqual(duration, seconds, "\(path)", file: file, line: line)
    }

    /// Waits (bounded) until nginx has more than `bytes` of `stream`.
    private func awaitPublishing(_ stream: String, bytes: Int = 30_000) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while ((try? FileManager.default.attributesOfItem(atPath: server.recordingPath(stream: stream))[.size] as? Int) ?? 0) <= bytes {
            guard ContinuousClock.now < deadline else { throw TimeoutError(what: "nginx receiving \(stream)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    func testPlayoutAndChannelsStopOnSIGTERMWithTheirRecordingsWhole() async throws {
        try PlayoutClip.a.make(in: dir, seconds: 4)
        let schedule = dir.appendingPathComponent("schedule.json").path
        try #"{"loop": "forever", "content": [{"id": "a", "source": "A.mp4", "in": 0, "out": 4}]}"#
            .write(toFile: schedule, atomically: true, encoding: .utf8)
        let playoutRecording = dir.appendingPathComponent("playout.flv").path
        let playout = try RunningCLI(["playout", schedule, server.url(stream: "p-term"), "--record", playoutRecording, "--json"])
        defer { if playout.isRunning { kill(playout.processIdentifier, SIGKILL) } }

        let config = dir.appendingPathComponent("channels.json").path
        try #"{"channels": [{"id": "c", "input": "A.mp4", "loop": "forever", "record": "channel.flv", "outputs": ["\#(server.url(stream: "c-term"))"]}]}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let channels = try RunningCLI(["channels", config, "--log-format", "json"])
        defer { if channels.isRunning { kill(channels.processIdentifier, SIGKILL) } }

        try await awaitPublishing("p-term")
        try await awaitPublishing("c-term")
        try await Task.sleep(for: .seconds(2))  // the scenario: a few seconds on air
        await terminate(playout, "playout")
        await terminate(channels, "channels")
        try assertWhole(playoutRecording, atLeast: 1)
        let channelRecording = try FileManager.default.contentsOfDirectory(atPath: dir.path).first { $0.hasPrefix("channel") && $0.hasSuffix(".flv") }
        try assertWhole(dir.appendingPathComponent(try XCTUnwrap(channelRecording, "no channel recording")).path, atLeast: 1)
        // The server was told: nginx closed both recordings.
        _ = try await server.awaitRecording(stream: "p-term")
        _ = try await server.awaitRecording(stream: "c-term")
    }

    func testServeAndLoopbackStopOnSIGTERM() async throws {
        let received = dir.appendingPathComponent("received").path
        try FileManager.default.createDirectory(atPath: received, withIntermediateDirectories: true)
        let serve = try RunningCLI(["serve", "--port", "0", "--record", received])
        defer { if serve.isRunning { kill(serve.processIdentifier, SIGKILL) } }
        let loopback = try RunningCLI(["loopback", "--listen", "0", "--upstream", "127.0.0.1:\(server.port)"])
        defer { if loopback.isRunning { kill(loopback.processIdentifier, SIGKILL) } }
        func port(_ cli: RunningCLI, _ prefix: String) async throws -> String {
            let found = await cli.awaitLine { $0.contains(prefix) }
            let line = try XCTUnwrap(found, "\(prefix): \(cli.output)")
            let rest = try XCTUnwrap(line.components(separatedBy: "127.0.0.1:").dropFirst().first)
            return String(rest.prefix { $0.isNumber })
        }
        let servePort = try await port(serve, "listening on rtmp://")
        let loopbackPort = try await port(loopback, "loopback listening on rtmp://")
        let toServe = try RunningCLI(["push", TestMedia.path(.h264AAC), "rtmp://127.0.0.1:\(servePort)/live/s-term", "--loop", "forever"])
        defer { if toServe.isRunning { kill(toServe.processIdentifier, SIGKILL) } }
        let throughLoopback = try RunningCLI(["push", TestMedia.path(.h264AAC), "rtmp://127.0.0.1:\(loopbackPort)/live/l-term", "--loop", "forever"])
        defer { if throughLoopback.isRunning { kill(throughLoopback.processIdentifier, SIGKILL) } }
        let publishing = await serve.awaitLine { $0.contains("publish started") }
        XCTAssertNotNil(publishing, serve.output.joined(separator: "\n"))
        try await awaitPublishing("l-term")
        try await Task.sleep(for: .seconds(2))
        await terminate(serve, "serve")
        await terminate(loopback, "loopback")
        let files = try FileManager.default.contentsOfDirectory(atPath: received)
        XCTAssertTrue(files.contains("s-term.flv"), "serve finished its recording: \(files)")
        toServe.interrupt()
        throughLoopback.interrupt()
        _ = await toServe.awaitExit(timeout: .seconds(30))
        _ = await throughLoopback.awaitExit(timeout: .seconds(30))
    }
}
