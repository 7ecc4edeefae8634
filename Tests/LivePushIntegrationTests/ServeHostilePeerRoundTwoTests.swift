import Foundation
import LivePushWire
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `livepush serve` against a second round of hostile peers: megabyte lists and metadata that once
/// stayed in its memory for good, publishes that replaced another's recording, a FourCC that
/// reached the terminal raw, and a listener exposed without a secret. Every check is made on the
/// running process (its memory in /proc, its output) and on the files it recorded.
final class ServeHostilePeerRoundTwoTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = try TestMedia.makeTemporaryDirectory(prefix: "livepush-serve-hostile2")
    }

    override func tearDown() {
        TestMedia.removeTemporaryDirectory(directory)
    }

    /// Starts `livepush serve` on a free port, recording into the test's directory.
    private func startServe(_ extra: [String] = []) async throws -> (RunningCLI, Int) {
        try await ServeProcess.start(recordingInto: directory, extra)
    }

    /// A connected client (handshake and `connect` done) on the `live` app, with `extra` in its command object.
    private func connectedClient(_ port: Int, extra: [AMF0Property] = []) throws -> RawRTMPClient {
        let client = try RawRTMPClient(port: port)
        try client.handshake()
        try client.send(.command([.string("connect"), .number(1), .object([AMF0Property("app", .string("live"))] + extra)]))
        let reply = try AMF0.decode(client.readUntil { $0.type == .commandAMF0 }.payload)
        XCTAssertEqual(reply.first, .string("_result"))
        return client
    }

    /// Starts a publish of `name` on stream 1 of a connected client and sends one video frame of `payload`.
    private func publish(_ client: RawRTMPClient, _ name: String, video: [UInt8]) throws {
        try client.send(.command([.string("createStream"), .number(2), .null]))
        _ = try client.readUntil { $0.type == .commandAMF0 }
        try client.send(.command([.string("publish"), .number(0), .null, .string(name), .string("live")], streamID: 1, chunkStreamID: 4))
        let status = try AMF0.decode(client.readUntil { $0.type == .commandAMF0 }.payload)
        XCTAssertEqual(status[3]["code"], .string("NetStream.Publish.Start"), name.debugDescription)
        try client.send(RTMPMessage(type: .video, streamID: 1, chunkStreamID: 6, payload: video))
    }

    private func endPublish(_ client: RawRTMPClient) throws {
        try client.send(.command([.string("deleteStream"), .number(0), .null, .number(1)]))
    }

    /// Waits (bounded) until serve has printed `count` lines that start with `prefix`.
    private func awaitLines(_ serve: RunningCLI, _ prefix: String, count: Int, timeout: Duration = .seconds(30)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if serve.output.filter({ $0.hasPrefix(prefix) }).count >= count { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    /// ``awaitLines(_:_:count:timeout:)``, failing the test when the lines do not come.
    private func expectLines(_ serve: RunningCLI, _ prefix: String, count: Int, file: StaticString = #filePath, line: UInt = #line) async {
        if await !awaitLines(serve, prefix, count: count) {
            XCTFail("serve printed fewer than \(count) lines starting \(prefix.debugDescription): \(serve.output)", file: file, line: line)
        }
    }

    // MARK: 4. What peers send is not kept

    func testHugeConnectListsAndMetadataLeaveNoMemoryBehind() async throws {
        let (serve, port) = try await startServe()
        defer { serve.interrupt() }
        let pid = serve.processIdentifier

        // One ordinary peer first, so that what any connection costs once (the event loop's buffers) is in the baseline.
        try connectedClient(port).close()
        await expectLines(serve, "disconnected", count: 1)
        try await Task.sleep(for: .seconds(1))  // its trim (500 ms after the close) has run
        let before = Self.residentKiB(pid)
        let anonymousBefore = Self.residentKiB(pid, field: "RssAnon")

        // Five peers at once, each with a 1,000,000-entry fourCcList: 7 MB in the connect command.
        let list = AMF0Value.strictArray(Array(repeating: .string("hvc1"), count: 1_000_000))
        var hostile = RTMPMessage.command([.string("connect"), .number(1), .object([
            AMF0Property("app", .string("live")), AMF0Property("fourCcList", list),
        ])])
        XCTAssertGreaterThan(hostile.payload.count, 7_000_000)
        hostile.chunkStreamID = 3
        var peers: [RawRTMPClient] = []
        for _ in 0..<5 {
            let peer = try RawRTMPClient(port: port)
            try peer.handshake()
            peers.append(peer)
        }
        let sending = peers.map { peer in Task.detached { [peer = UnsafeTransfer(value: peer), hostile] in try peer.value.send(hostile) } }
        for task in sending { try await task.value }
        for peer in peers {
            let reply = try AMF0.decode(peer.readUntil { $0.type == .commandAMF0 }.payload)
            XCTAssertEqual(reply.first, .string("_error"))
            XCTAssertEqual(reply[3]["code"], .string("NetConnection.Connect.Rejected"))
        }
        let peak = Self.residentKiB(pid)

        // A list that fits the 64 KiB connect (9,000 entries) is accepted and cut to 16.
        let listed = try connectedClient(port, extra: [AMF0Property("fourCcList", .strictArray(Array(repeating: .string("av01"), count: 9000)))])
        await expectLines(serve, "limit peerValuesTrimmed reached", count: 1)
        listed.close()

        // A publisher whose onMetaData has 750,000 properties (13 MB).
        let publisher = try connectedClient(port)
        try publish(publisher, "meta", video: FLVBody.avcFrame([1], keyframe: true, compositionTimeMs: 0))
        let properties = (0..<750_000).map { AMF0Property("p\($0)", .number(Double($0))) }
        var metadata = RTMPMessage(type: .dataAMF0, streamID: 1, chunkStreamID: 5, payload: FLVBody.metadata(properties, withSetDataFrame: true))
        metadata.chunkStreamID = 5
        try publisher.send(metadata)
        try endPublish(publisher)
        await expectLines(serve, "publish ended live/meta", count: 1)

        peers.forEach { $0.close() }
        publisher.close()
        await expectLines(serve, "disconnected", count: 8)
        await expectLines(serve, "limit connectTooLarge reached", count: 5)
        await expectLines(serve, "limit metadataTooLarge reached", count: 1)

        // The memory comes back: polled (bounded), since the trim runs on its own thread.
        let deadline = ContinuousClock.now + .seconds(15)
        var after = Self.residentKiB(pid)
        while after > before + 32 * 1024, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            after = Self.residentKiB(pid)
        }
        // For the report only: where it settles once the trim has run (the check above does not wait for it).
        var settled = after
        for _ in 0..<10 {
            try await Task.sleep(for: .milliseconds(200))
            settled = min(settled, Self.residentKiB(pid))
        }
        let anonymousAfter = Self.residentKiB(pid, field: "RssAnon")
        print(String(format: "serve RSS: %.1f MiB before, %.1f MiB with five 7 MB connects, %.1f MiB when back within 32 MiB, %.1f MiB settled "
                     + "(anonymous: %.1f MiB before, %.1f MiB settled)",
                     Double(before) / 1024, Double(peak) / 1024, Double(after) / 1024, Double(settled) / 1024,
                     Double(anonymousBefore) / 1024, Double(anonymousAfter) / 1024))
        XCTAssertGreaterThan(before, 0, "the process's memory was read")
        XCTAssertLessThanOrEqual(after, before + 32 * 1024, "RSS within 32 MiB of where it started")
        XCTAssertTrue(serve.isRunning)
        serve.interrupt()
        let status = await serve.awaitExit(timeout: .seconds(20))
        XCTAssertEqual(status, 0)
    }

    // MARK: 6. No publish replaces a recording

    func testOverlappingPublishesAndLookalikeNamesNeverReplaceARecording() async throws {
        let (serve, port) = try await startServe()
        defer { serve.interrupt() }

        // Two overlapping publishes of `vic`: the older ends first and keeps `vic-ID.flv`.
        let older = try connectedClient(port)
        try publish(older, "vic", video: FLVBody.avcFrame(Array(repeating: 0xA1, count: 64), keyframe: true, compositionTimeMs: 0))
        let newer = try connectedClient(port)
        try publish(newer, "vic", video: FLVBody.avcFrame(Array(repeating: 0xB2, count: 64), keyframe: true, compositionTimeMs: 0))
        try endPublish(older)
        await expectLines(serve, "publish ended live/vic", count: 1)
        try endPublish(newer)
        await expectLines(serve, "publish ended live/vic", count: 2)
        // `victim\0` and `victim\u{202E}` both clean to `victim_.flv`.
        let lookalike = try connectedClient(port)
        try publish(lookalike, "victim\u{0}", video: FLVBody.avcFrame(Array(repeating: 0xC3, count: 64), keyframe: true, compositionTimeMs: 0))
        try endPublish(lookalike)
        await expectLines(serve, "publish ended live/victim", count: 1)

        let recorded = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".flv") }.sorted()
        XCTAssertEqual(recorded.count, 3, "\(recorded)")
        XCTAssertTrue(recorded.contains("vic.flv") && recorded.contains("victim_.flv"), "\(recorded)")
        var hashes: [String: String] = [:]
        for name in recorded { hashes[name] = try Self.sha256(directory.appendingPathComponent(name)) }

        // A third peer publishes every resulting file's name, and the lookalike its twin.
        let attacker = try connectedClient(port)
        var names = recorded.map { String($0.dropLast(4)) }
        names.append("victim\u{202E}")
        for (index, name) in names.enumerated() {
            try publish(attacker, name, video: FLVBody.avcFrame(Array(repeating: 0xEE, count: 64), keyframe: true, compositionTimeMs: 0))
            try endPublish(attacker)
            await expectLines(serve, "publish ended", count: 4 + index)
            try attacker.send(.command([.string("createStream"), .number(9), .null]))  // orders the next publish after the end
            _ = try attacker.readUntil { $0.type == .commandAMF0 }
        }
        for client in [older, newer, lookalike, attacker] { client.close() }
        serve.interrupt()
        let status = await serve.awaitExit(timeout: .seconds(20))
        XCTAssertEqual(status, 0)

        for (name, hash) in hashes {
            XCTAssertEqual(try Self.sha256(directory.appendingPathComponent(name)), hash, "\(name) is byte-for-byte what it was")
        }
        let after = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        XCTAssertEqual(after.filter { $0.hasSuffix(".flv") }.count, 3 + names.count, "each publish has a file of its own: \(after.sorted())")
        XCTAssertFalse(after.contains { $0.contains(".part-") }, "every part file was named: \(after.sorted())")
    }

    // MARK: 7. No raw FourCC on the terminal

    func testAnEscapeFourCCNeverReachesTheTerminal() async throws {
        let (serve, port) = try await startServe()
        defer { serve.interrupt() }
        let client = try connectedClient(port, extra: [AMF0Property("fourCcList", .strictArray([.string("\u{1B}[2J")]))])
        // Enhanced RTMP coded frames (packet type 1, keyframe) whose FourCC is a terminal sequence.
        let fourCCs: [[UInt8]] = [[0x1B, 0x5B, 0x32, 0x4A], [0x1B, 0x5D, 0x30, 0x3B], [0xC2, 0x9B, 0x32, 0x4A]]
        for (index, fourCC) in fourCCs.enumerated() {
            try publish(client, "e\(index)", video: [0x80 | 0x10 | 0x01] + fourCC + [0, 0, 0, 1, 2, 3])
            try endPublish(client)
            await expectLines(serve, "publish ended", count: index + 1)
            try client.send(.command([.string("createStream"), .number(9), .null]))
            _ = try client.readUntil { $0.type == .commandAMF0 }
        }
        client.close()
        serve.interrupt()
        let status = await serve.awaitExit(timeout: .seconds(20))
        XCTAssertEqual(status, 0)

        XCTAssertTrue(serve.output.contains { $0.contains("keyframes, \\x1b[2J)") }, "the FourCC is shown escaped: \(serve.output)")
        for text in serve.output + [serve.standardError] {
            XCTAssertFalse(text.utf8.contains(0x1B), "no raw ESC: \(text.debugDescription)")
            XCTAssertFalse(text.unicodeScalars.contains { (0x80...0x9F).contains($0.value) }, "no C1 control: \(text.debugDescription)")
        }
    }

    // MARK: 10c. Beyond loopback: a warning, and a publish key

    func testAHostBeyondLoopbackWarns() async throws {
        // A key is set, so the listener is never open to a publish while it is up; the test stops it at once.
        let exposed = try RunningCLI(["serve", "--port", "0", "--host", "0.0.0.0", "--publish-key", "not-for-publishing-0"])
        defer { exposed.interrupt() }
        let started = await exposed.awaitLine { $0.hasPrefix("listening on ") }
        exposed.interrupt()
        XCTAssertNotNil(started, exposed.standardError)
        _ = await exposed.awaitExit(timeout: .seconds(20))
        XCTAssertTrue(exposed.standardError.contains("warning: --host 0.0.0.0 is beyond loopback"), exposed.standardError)
        XCTAssertTrue(exposed.standardError.contains("warning: --publish-key is visible to every user"), exposed.standardError)
        XCTAssertFalse((exposed.output + [exposed.standardError]).contains { $0.contains("not-for-publishing-0") }, "the key is never printed")

        let local = try RunningCLI(["serve", "--port", "0", "--host", "127.0.0.1"])
        defer { local.interrupt() }
        _ = await local.awaitLine { $0.hasPrefix("listening on ") }
        local.interrupt()
        _ = await local.awaitExit(timeout: .seconds(20))
        XCTAssertFalse(local.standardError.contains("warning"), local.standardError)
    }

    func testThePublishKeyTurnsFFmpegAwayWithoutItAndLetsItInWithIt() async throws {
        let key = "k3y-" + UUID().uuidString
        let keyFile = directory.appendingPathComponent("publish.key")
        try Data((key + "\n").utf8).write(to: keyFile)
        let (serve, port) = try await startServe(["--publish-key-file", keyFile.path])
        defer { serve.interrupt() }

        func push(_ name: String) throws -> ProcessRunner.Result {
            try ProcessRunner.run("ffmpeg", ["-v", "error", "-i", TestMedia.path(.h264AAC), "-c", "copy", "-t", "1", "-f", "flv",
                                             "rtmp://127.0.0.1:\(port)/live/\(name)"], timeout: 60)
        }
        for wrong in ["cam", "cam?key=", "cam?key=\(key.dropLast())", "cam?key=\(key)x", "cam?other=\(key)"] {
            let refused = try push(wrong)
            XCTAssertFalse(refused.succeeded, "\(wrong): ffmpeg published")
        }
        await expectLines(serve, "protocol error:", count: 5)
        XCTAssertFalse(serve.output.contains { $0.hasPrefix("publish started") }, "no publish without the key")

        let admitted = try push("cam?key=\(key)")
        XCTAssertTrue(admitted.succeeded, admitted.stderrString)
        await expectLines(serve, "publish ended live/cam:", count: 1)
        serve.interrupt()
        let status = await serve.awaitExit(timeout: .seconds(20))
        XCTAssertEqual(status, 0)

        let probe = try FFProbe.run(directory.appendingPathComponent("cam.flv").path)
        XCTAssertGreaterThan(probe.videoPackets.count, 0, "the keyed publish was recorded under the name without its query")
        let printed = serve.output + [serve.standardError]
        XCTAssertFalse(printed.contains { $0.contains(key) }, "the key is never printed in full")
        XCTAssertTrue(serve.output.first?.contains("?key=\(key.prefix(4))****") == true, serve.output.first ?? "")
    }

    func testThePublishKeyCanComeFromTheEnvironmentAndIsCheckedAtStart() async throws {
        for bad in [["--publish-key", "k", "--publish-key-file", "/dev/null"], ["--publish-key", "with space"],
                    ["--publish-key-file", directory.appendingPathComponent("missing").path]] {
            let refused = try RunningCLI(["serve", "--port", "0"] + bad)
            let status = await refused.awaitExit(timeout: .seconds(20))
            XCTAssertEqual(status, 64, "\(bad): bad usage")
            XCTAssertFalse(refused.standardError.contains("with space"), "the key is not quoted back")
        }

        let key = "env-" + UUID().uuidString
        setenv("LIVEPUSH_PUBLISH_KEY", key, 1)
        defer { unsetenv("LIVEPUSH_PUBLISH_KEY") }
        let (serve, port) = try await startServe()
        unsetenv("LIVEPUSH_PUBLISH_KEY")
        defer { serve.interrupt() }
        let client = try connectedClient(port)
        try client.send(.command([.string("publish"), .number(0), .null, .string("cam?key=nope"), .string("live")], streamID: 1, chunkStreamID: 4))
        let refused = try AMF0.decode(client.readUntil { $0.type == .commandAMF0 }.payload)
        XCTAssertEqual(refused[3]["code"], .string("NetStream.Publish.BadAuth"))
        try publish(client, "cam?key=\(key)", video: FLVBody.avcFrame([1], keyframe: true, compositionTimeMs: 0))
        try endPublish(client)
        await expectLines(serve, "publish ended live/cam:", count: 1)
        client.close()
        serve.interrupt()
        let status = await serve.awaitExit(timeout: .seconds(20))
        XCTAssertEqual(status, 0)
        XCTAssertFalse((serve.output + [serve.standardError]).contains { $0.contains(key) }, "the key is never printed in full")
    }

    // MARK: Helpers

    /// A `/proc/PID/status` figure in KiB (`VmRSS`: resident memory; `RssAnon`: the heap's part of it).
    static func residentKiB(_ pid: Int32, field: String = "VmRSS") -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
              let kib = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return 0 }
        return kib
    }

    /// The file's SHA-256 (sha256sum), as hex.
    static func sha256(_ url: URL) throws -> String {
        let result = try ProcessRunner.run("sha256sum", [url.path], timeout: 20)
        guard result.succeeded, let hash = result.stdoutString.split(separator: " ").first else {
            throw RawRTMPClient.Failure(description: "sha256sum \(url.path) failed")
        }
        return String(hash)
    }
}

/// A client handed to one task that sends on it (and is used from the test again only after that task ends).
private struct UnsafeTransfer<Value>: @unchecked Sendable {
    let value: Value
}
