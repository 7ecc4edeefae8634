import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// An SRT URL whose stream id holds an `@` (`streamid=a@b&passphrase=P`) once made the
/// redaction take everything up to the `@` for a user-info and print the passphrase after it:
/// in `push --json`, in `GET /channels/ID` and in the channels' JSON log. Here a real
/// `srt-live-transmit` listener with that passphrase takes the stream, so the URL is the one
/// that publishes, and the passphrase appears nowhere the process writes or serves.
final class RedactionEndToEndTests: XCTestCase {
    private let passphrase = "Pp7-e2e-srt-passphrase-quux"
    private let token = "e2e-control-token"
    private var dir: URL!

    override func setUpWithError() throws {
        try XCTSkipUnless(SRTListener.isAvailable, "srt-live-transmit (srt-tools) not installed")
        dir = try TestMedia.makeTemporaryDirectory(prefix: "RedactionEndToEnd")
    }

    override func tearDown() {
        if let dir { TestMedia.removeTemporaryDirectory(dir) }
        dir = nil
    }

    private func srtURL(_ port: UInt16) -> String {
        "srt://127.0.0.1:\(port)?streamid=a@b&passphrase=\(passphrase)&latency=500000"
    }

    /// No trace of the passphrase: neither whole nor past the 4 characters a mask may keep.
    private func assertNoPassphrase(_ text: String, _ place: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(text.contains(passphrase.dropFirst(4)), "\(place) shows the passphrase: \(text)", file: file, line: line)
    }

    func testPushWithJSONNeverPrintsTheSRTPassphrase() async throws {
        let clip = try PlayoutClip.a.make(in: dir, seconds: 2)
        let listener = try SRTListener(in: dir, options: "passphrase=\(passphrase)")
        let cli = try RunningCLI(["push", clip, srtURL(listener.port), "--json", "--retry-count", "0"])
        defer { if cli.isRunning { kill(cli.processIdentifier, SIGKILL) } }
        let exit = await cli.awaitExit(timeout: .seconds(40))
        XCTAssertEqual(exit, 0, cli.standardError)
        XCTAssertTrue(listener.awaitExit(timeout: 10), "the listener saw the connection close")
        let received = try ReceivedTS(listener.outputPath)
        XCTAssertEqual(received.videoFrames, 50, "the listener decrypted every frame: the passphrase was the right one")

        let stdout = cli.output.joined(separator: "\n")
        assertNoPassphrase(stdout, "stdout")
        assertNoPassphrase(cli.standardError, "stderr")
        // The URL is shown, redacted: its host and port, the stream id cut, the passphrase masked.
        XCTAssertTrue(stdout.contains("srt://127.0.0.1:\(listener.port)?streamid=****&passphrase=****&latency=500000"), stdout)
    }

    func testTheChannelsAPIAndJSONLogNeverShowTheSRTPassphrase() async throws {
        try PlayoutClip.a.make(in: dir, seconds: 10)
        let listener = try SRTListener(in: dir, options: "passphrase=\(passphrase)")
        let configPath = dir.appendingPathComponent("channels.json").path
        try #"""
        {"control": "127.0.0.1:0", "token": "\#(token)",
         "channels": [{"id": "s", "input": "A.mp4", "loop": "forever", "outputs": ["\#(srtURL(listener.port))"]}]}
        """#.write(toFile: configPath, atomically: true, encoding: .utf8)
        let cli = try RunningCLI(["channels", configPath, "--log-format", "json"])
        defer {
            if cli.isRunning { kill(cli.processIdentifier, SIGKILL) }
            listener.stop()
        }
        let listening = await cli.awaitLine { $0.contains("controlListening") }
        let line = try XCTUnwrap(listening, "the API never said where it listens: \(cli.output)\n\(cli.standardError)")
        let base = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["url"] as? String)
        let receiving = await awaitFileSize(listener.outputPath, above: 50_000)
        XCTAssertTrue(receiving, "the listener never received the channel's stream: \(cli.standardError)")

        var request = URLRequest(url: try XCTUnwrap(URL(string: base + "/channels/s")))
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.data(for: request)
        XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 200)
        let channel = String(decoding: data, as: UTF8.self)
        assertNoPassphrase(channel, "GET /channels/s")
        XCTAssertTrue(channel.contains("passphrase=****"), "the output's URL is shown, redacted: \(channel)")
        let list = try await URLSession.shared.data(for: { var r = request; r.url = URL(string: base + "/channels"); return r }())
        assertNoPassphrase(String(decoding: list.0, as: UTF8.self), "GET /channels")

        cli.interrupt()
        let exit = await cli.awaitExit(timeout: .seconds(30))
        XCTAssertEqual(exit, 0)
        let log = cli.standardError
        XCTAssertTrue(log.contains("\"pushStarted\"") && log.contains("\"url\":\"srt://127.0.0.1:\(listener.port)?streamid=****&passphrase=****"),
                      "the JSON log names the output, redacted: \(log)")
        assertNoPassphrase(log, "the JSON log")
        assertNoPassphrase(cli.output.joined(separator: "\n"), "stdout")
    }

    /// Waits (bounded) until the file holds more than `bytes`.
    private func awaitFileSize(_ path: String, above bytes: Int, timeout: Duration = .seconds(30)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            if size > bytes { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }
}
