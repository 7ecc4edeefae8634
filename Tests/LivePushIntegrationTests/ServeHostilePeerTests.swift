import Foundation
import LivePushWire
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `livepush serve` against peers that send what no publisher would: each case once crashed
/// the process, overwrote a recording or grew it without bound. Every check is made on the
/// running process (its descriptors and memory in /proc) and on what it recorded.
final class ServeHostilePeerTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = try TestMedia.makeTemporaryDirectory(prefix: "livepush-serve-hostile")
    }

    override func tearDown() {
        TestMedia.removeTemporaryDirectory(directory)
    }

    /// Starts `livepush serve` on a free port, recording into the test's directory.
    private func startServe(_ extra: [String] = []) async throws -> (RunningCLI, Int) {
        try await ServeProcess.start(recordingInto: directory, extra)
    }

    /// A connected client (handshake and `connect` done) on the `live` app.
    private func connectedClient(_ port: Int, receiveBuffer: Int32? = nil) throws -> RawRTMPClient {
        let client = try RawRTMPClient(port: port, receiveBuffer: receiveBuffer)
        try client.handshake()
        try client.send(.command([.string("connect"), .number(1), .object([AMF0Property("app", .string("live"))])]))
        let reply = try AMF0.decode(client.readUntil { $0.type == .commandAMF0 }.payload)
        XCTAssertEqual(reply.first, .string("_result"))
        return client
    }

    /// The server still answers on `client`: a createStream gets its `_result`.
    private func assertAnswers(_ client: RawRTMPClient, transaction: Double, file: StaticString = #filePath, line: UInt = #line) throws {
        try client.send(.command([.string("createStream"), .number(transaction), .null]))
        let reply = try AMF0.decode(client.readUntil { $0.type == .commandAMF0 }.payload)
        XCTAssertEqual(Array(reply.prefix(2)), [.string("_result"), .number(transaction)], file: file, line: line)
    }

    func testNaNDeleteStreamAndA16MiBNameLeaveTheProcessUp() async throws {
        let (serve, port) = try await startServe()
        defer { serve.interrupt() }

        // No connect first: a deleteStream whose id is NaN right after the handshake, then others
        // no Int conversion can take.
        let raw = try RawRTMPClient(port: port)
        try raw.handshake()
        for id in [Double.nan, -Double.infinity, 1e300, -1, 0.5] {
            try raw.send(.command([.string("deleteStream"), .number(0), .null, .number(id)]))
        }
        let client = try connectedClient(port)
        try assertAnswers(client, transaction: 2)

        // FCPublish with a name of 16 MiB (the largest message RTMP can carry): the reply must not
        // echo it. The server refuses the name and goes on.
        let name = String(repeating: "n", count: 0xFF_FFFF - 64)
        var big = RTMPMessage.command([.string("FCPublish"), .number(3), .null, .string(name)])
        XCTAssertLessThanOrEqual(big.payload.count, 0xFF_FFFF)
        big.chunkStreamID = 8
        try client.send(big)
        let fcReply = try AMF0.decode(client.readUntil { $0.type == .commandAMF0 }.payload)
        XCTAssertEqual(Array(fcReply.prefix(2)), [.string("_result"), .number(3)])
        try assertAnswers(client, transaction: 4)
        let refused = await serve.awaitLine { $0.hasPrefix("limit nameTooLong reached") }
        XCTAssertNotNil(refused, "the long name is refused and counted")
        XCTAssertTrue(serve.isRunning)
        for line in serve.output { XCTAssertLessThan(line.utf8.count, 4096, "no line echoes the name") }

        // A fresh connection is served too.
        try assertAnswers(try connectedClient(port), transaction: 2)
        serve.interrupt()
        let status = await serve.awaitExit(timeout: .seconds(20))
        XCTAssertEqual(status, 0)
        let counts = await serve.awaitLine { $0.hasPrefix("limits reached:") }
        XCTAssertTrue(counts?.contains("numberOutOfRange=5") == true, counts ?? "no count line")
    }

    func testANULInTheStreamNameLeavesTheExistingRecordingUnchanged() async throws {
        // An earlier recording under the name the NUL would cut the path to.
        let victim = directory.appendingPathComponent("victim.flv")
        try FileManager.default.copyItem(at: TestMedia.url(.h264AAC), to: victim)
        let before = try Data(contentsOf: victim)
        let (serve, port) = try await startServe()
        defer { serve.interrupt() }

        let client = try connectedClient(port)
        try assertAnswers(client, transaction: 2)
        for name in ["victim.flv\u{0}", "../victim.flv", "victim.flv\u{0}/../../x", "\u{1B}[2J.flv"] {
            try client.send(.command([.string("publish"), .number(0), .null, .string(name), .string("live")], streamID: 1, chunkStreamID: 4))
            let status = try AMF0.decode(client.readUntil { $0.type == .commandAMF0 }.payload)
            XCTAssertEqual(status[3]["code"], .string("NetStream.Publish.Start"))
            try client.send(RTMPMessage(type: .video, streamID: 1, chunkStreamID: 6,
                                        payload: FLVBody.avcFrame([1, 2, 3], keyframe: true, compositionTimeMs: 0)))
            try client.send(.command([.string("deleteStream"), .number(0), .null, .number(1)]))
            try assertAnswers(client, transaction: 9)
        }
        client.close()
        serve.interrupt()
        let status = await serve.awaitExit(timeout: .seconds(20))
        XCTAssertEqual(status, 0)

        XCTAssertEqual(try Data(contentsOf: victim), before, "victim.flv is byte-for-byte what it was")
        XCTAssertTrue(serve.output.contains { $0.contains("publish started live/\\x1b[2J.flv") }, "the name is shown escaped")
        XCTAssertFalse(serve.output.contains { $0.unicodeScalars.contains { $0.value < 0x20 } }, "no control character reaches the terminal")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        XCTAssertTrue(files.allSatisfy { !$0.contains("\u{0}") && !$0.contains("\u{1B}") && !$0.hasPrefix(".") }, "\(files)")
        XCTAssertTrue(files.contains("victim.flv_.flv"), "\(files)")
        let parent = try FileManager.default.contentsOfDirectory(atPath: directory.deletingLastPathComponent().path)
        XCTAssertFalse(parent.contains("victim.flv"), "nothing written outside the record directory")
    }

    /// 1500 sockets that never send a byte, and a client that pings without reading the answers,
    /// do not keep a publisher out, and do not hold the process's descriptors or memory.
    func testIdleSocketsAndAPingerThatNeverReadsDoNotStopAPublisherOrGrowTheProcess() async throws {
        Self.raiseDescriptorLimit(to: 4096)
        let (serve, port) = try await startServe()
        defer { serve.interrupt() }
        let pid = serve.processIdentifier

        var idle: [Int32] = []
        defer { idle.forEach { Glibc.close($0) } }
        for _ in 0..<1500 {
            idle.append(try XCTUnwrap(RawRTMPClient.connectTCP(port: port), "idle socket \(idle.count) could not connect: errno \(errno)"))
        }

        // The process's memory, sampled until the end of the test.
        let sampling = Task.detached { () -> Int in
            var peak = 0
            while !Task.isCancelled {
                peak = max(peak, ServeHostilePeerTests.residentMiB(pid))
                try? await Task.sleep(for: .milliseconds(100))
            }
            return peak
        }

        // The pinger: ping requests as fast as the socket takes them, never a read.
        let pinger = PingFlood(client: try connectedClient(port, receiveBuffer: 4096))
        let pinging = Task.detached { () -> (batches: Int, closed: Bool) in
            let ping = RTMPChunkEncoder().encodeRepeated(.userControl(event: 6, data: [0, 0, 0, 1]), times: 1000)
            let deadline = ContinuousClock.now + .seconds(60)
            var batches = 0
            while ContinuousClock.now < deadline {
                do { try pinger.client.sendAll(ping) } catch { return (batches, true) }
                batches += 1
            }
            return (batches, false)
        }

        // A real publisher while all of that is connected: ffmpeg, 200 frames (the sample twice).
        let push = try ProcessRunner.run("ffmpeg", ["-v", "error", "-stream_loop", "1", "-i", TestMedia.path(.h264AAC),
                                                    "-c", "copy", "-f", "flv", "rtmp://127.0.0.1:\(port)/live/through"], timeout: 60)
        XCTAssertTrue(push.succeeded, push.stderrString)
        let ended = await serve.awaitLine { $0.hasPrefix("publish ended live/through") }
        XCTAssertNotNil(ended)
        let probe = try FFProbe.run(directory.appendingPathComponent("through.flv").path)
        XCTAssertEqual(probe.videoPackets.count, 200, "every frame recorded")

        let pinged = await pinging.value
        XCTAssertTrue(pinged.closed, "the pinger's connection was closed (\(pinged.batches) batches of 1000 pings)")

        // The idle sockets are closed by the handshake timeout (an upper bound of 30 s).
        let deadline = ContinuousClock.now + .seconds(30)
        var descriptors = Self.descriptorCount(pid)
        while descriptors >= 300 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            descriptors = Self.descriptorCount(pid)
        }
        XCTAssertLessThan(descriptors, 300)
        sampling.cancel()
        let peak = await sampling.value
        XCTAssertGreaterThan(peak, 0, "the process's memory was read")
        XCTAssertLessThan(peak, 200, "peak resident MiB")
        XCTAssertTrue(serve.isRunning)
        serve.interrupt()
        let status = await serve.awaitExit(timeout: .seconds(20))
        XCTAssertEqual(status, 0)
        let countLine = await serve.awaitLine { $0.hasPrefix("limits reached:") }
        let counts = try XCTUnwrap(countLine)
        XCTAssertTrue(counts.contains("handshakeTimeout="), counts)
        XCTAssertTrue(counts.contains("unreadReplies=1"), counts)
        print("serve after the flood: \(counts); \(descriptors) descriptors; peak RSS \(peak) MiB; \(pinged.batches) batches of 1000 pings")
    }

    // MARK: The process and sockets

    /// This process's (and so `serve`'s) descriptor limit, to `wanted` at least: the hard limit too
    /// when allowed (root), else as far as the hard limit goes.
    private static func raiseDescriptorLimit(to wanted: UInt) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < wanted else { return }
        var raised = limit
        raised.rlim_cur = wanted
        raised.rlim_max = max(limit.rlim_max, wanted)
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) != 0 {
            limit.rlim_cur = limit.rlim_max
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
    }

    private static func descriptorCount(_ pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }

    static func residentMiB(_ pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kib = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return 0 }
        return kib / 1024
    }
}

/// The pinger's client, handed to the task that floods it (and only used there from then on).
private struct PingFlood: @unchecked Sendable {
    let client: RawRTMPClient
}

private extension RTMPChunkEncoder {
    /// `message` chunked `times` times in a row, as one buffer.
    func encodeRepeated(_ message: RTMPMessage, times: Int) -> [UInt8] {
        var encoder = self
        var out: [UInt8] = []
        for _ in 0..<times { encoder.encode(message, into: &out) }
        return out
    }
}
