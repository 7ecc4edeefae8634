import Foundation
@testable import LivePushLoopback
import LivePushWire
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The loopback's faults seen from a raw TCP / RTMP client: what arrives on the wire, when, and
/// how the connection ends. Every read is bounded by a socket timeout.
final class FaultLoopbackSocketTests: XCTestCase {
    private func start(_ specs: [String]) throws -> FaultLoopback {
        let loopback = FaultLoopback(configuration: .init(faults: try specs.map { try FaultSpec.parse($0) }))
        try loopback.start()
        return loopback
    }

    func testRefuseFirstConnectionThenAccept() async throws {
        let loopback = try start(["refuse@conn=1"])
        defer { loopback.stop() }
        let events = loopback.makeEventStream()

        // Nothing is read from or sent to the refused connection: the client sees a reset, on its
        // first read or, when the loopback's reset overtakes a busy client's connect(), in connect().
        XCTAssertEqual(try FaultTestClient.outcomeOfRefusedConnection(port: loopback.port), .reset)
        let closed = try await FaultEventWaiter.first(events) { if case .closed(1, let reason) = $0 { reason } else { nil } }
        XCTAssertTrue(closed.contains("refused"), closed)

        let second = try FaultTestClient(port: loopback.port)
        defer { second.close() }
        try second.handshake()
        XCTAssertEqual(loopback.connectionCount, 2)
    }

    func testCloseDuringHandshake() throws {
        let loopback = try start(["close-handshake"])
        defer { loopback.stop() }
        let client = try FaultTestClient(port: loopback.port)
        defer { client.close() }
        XCTAssertEqual(client.send(FaultTestClient.c0c1()), 0)
        // No S0/S1: the connection ends first.
        let outcome = client.receive(max: 4096, timeout: 3)
        XCTAssertTrue(outcome == .eof || outcome == .reset, "\(outcome)")
    }

    func testResetAfterBytesPassesThatManyBytes() async throws {
        let loopback = try start(["reset-after-bytes=4000"])
        defer { loopback.stop() }
        let events = loopback.makeEventStream()
        let client = try FaultTestClient(port: loopback.port)
        defer { client.close() }
        try client.handshake()  // 3073 bytes: under the limit, answered normally
        // Another 2000 bytes cross the limit: the loopback resets the connection.
        try? client.sendCommand("x", 0, [.null, .string(String(repeating: "a", count: 1900))])
        let outcome = client.receive(max: 100, timeout: 3)
        XCTAssertEqual(outcome, .reset, "a reset (RST), not an orderly close")
        let reason = try await FaultEventWaiter.first(events) { if case .closed(1, let r) = $0 { r } else { nil } }
        XCTAssertTrue(reason.contains("after 4000 bytes"), reason)
    }

    func testRejectConnect() throws {
        let loopback = try start(["reject-connect"])
        defer { loopback.stop() }
        let client = try FaultTestClient(port: loopback.port)
        defer { client.close() }
        try client.handshake()
        try client.sendCommand("connect", 1, [.object([AMF0Property("app", .string("live"))])])
        let reply = try client.nextCommand(timeout: 3)
        XCTAssertEqual(reply.name, "_error")
        XCTAssertEqual(reply.transactionID, 1)
        XCTAssertEqual(reply.arguments.first?["code"]?.stringValue, "NetConnection.Connect.Rejected")
        XCTAssertEqual(reply.arguments.first?["level"]?.stringValue, "error")
        XCTAssertEqual(client.receive(max: 100, timeout: 3), .eof, "the loopback closes after the rejection")
    }

    func testRejectPublishAlreadyPublishingOnSecondConnectionOnly() throws {
        let loopback = try start(["reject-publish=already@conn=2"])
        defer { loopback.stop() }
        for connection in 1...2 {
            let client = try FaultTestClient(port: loopback.port)
            defer { client.close() }
            try client.handshake()
            try client.sendCommand("connect", 1, [.object([AMF0Property("app", .string("live"))])])
            XCTAssertEqual(try client.nextCommand(timeout: 3).name, "_result")
            try client.sendCommand("createStream", 2, [.null])
            let created = try client.nextCommand(timeout: 3)
            let streamID = UInt32(created.arguments.first?.numberValue ?? 0)
            try client.sendCommand("publish", 0, [.null, .string("s\(connection)"), .string("live")], streamID: streamID)
            let status = try client.nextCommand(timeout: 3)
            XCTAssertEqual(status.name, "onStatus")
            let info = status.arguments.first
            if connection == 1 {
                XCTAssertEqual(info?["code"]?.stringValue, "NetStream.Publish.Start")
            } else {
                XCTAssertEqual(info?["level"]?.stringValue, "error")
                XCTAssertEqual(info?["code"]?.stringValue, "NetStream.Publish.BadName")
                XCTAssertEqual(info?["description"]?.stringValue, "Already publishing")
            }
        }
    }

    func testCloseAfterPublish() throws {
        let loopback = try start(["close-after-publish"])
        defer { loopback.stop() }
        let client = try FaultTestClient(port: loopback.port)
        defer { client.close() }
        try client.handshake()
        try client.sendCommand("connect", 1, [.object([AMF0Property("app", .string("live"))])])
        XCTAssertEqual(try client.nextCommand(timeout: 3).name, "_result")
        try client.sendCommand("createStream", 2, [.null])
        XCTAssertEqual(try client.nextCommand(timeout: 3).name, "_result")
        try client.sendCommand("publish", 0, [.null, .string("s"), .string("live")], streamID: 1)
        let status = try client.nextCommand(timeout: 3)
        XCTAssertEqual(status.arguments.first?["code"]?.stringValue, "NetStream.Publish.Start")
        XCTAssertThrowsError(try client.nextCommand(timeout: 3)) { error in
            XCTAssertEqual(error as? FaultTestClient.Failure, .closed(.eof))
        }
    }

    func testMalformedReplyCannotBeDecoded() throws {
        let loopback = try start(["malformed-reply"])
        defer { loopback.stop() }
        let client = try FaultTestClient(port: loopback.port)
        defer { client.close() }
        try client.handshake()
        try client.sendCommand("connect", 1, [.object([AMF0Property("app", .string("live"))])])
        let message = try client.nextMessage(timeout: 3) { $0.type == .commandAMF0 }
        XCTAssertThrowsError(try RTMPCommand(message: message), "the reply to connect is not valid AMF0")
        // The next reply is well-formed again.
        try client.sendCommand("createStream", 2, [.null])
        XCTAssertEqual(try client.nextCommand(timeout: 3).name, "_result")
    }

    func testTruncatedReplyThenClose() throws {
        let loopback = try start(["truncated-reply"])
        defer { loopback.stop() }
        let client = try FaultTestClient(port: loopback.port)
        defer { client.close() }
        try client.handshake()
        try client.sendCommand("connect", 1, [.object([AMF0Property("app", .string("live"))])])
        XCTAssertThrowsError(try client.nextCommand(timeout: 3)) { error in
            XCTAssertEqual(error as? FaultTestClient.Failure, .closed(.eof))
        }
        XCTAssertGreaterThan(client.decoder.bufferedByteCount, 0, "part of a reply arrived")
    }

    func testStallHoldsTheHandshakeUntilTheRuleIsRemoved() throws {
        let loopback = try start(["stall"])
        defer { loopback.stop() }
        let client = try FaultTestClient(port: loopback.port)
        defer { client.close() }
        XCTAssertEqual(client.send(FaultTestClient.c0c1()), 0)
        XCTAssertEqual(client.receive(max: 4096, timeout: 0.5), .timeout, "stalled: no answer, connection open")
        loopback.setFaults([])
        var received = 0
        while received < 3073 {
            guard case .data(let bytes) = client.receive(max: 4096, timeout: 3) else { return XCTFail("no S0S1S2 after un-stalling") }
            received += bytes.count
        }
        XCTAssertEqual(received, 3073)
    }

    func testStallAfterMessagesStopsReplies() throws {
        let loopback = try start(["stall@messages=2"])
        defer { loopback.stop() }
        let client = try FaultTestClient(port: loopback.port)
        defer { client.close() }
        try client.handshake()
        try client.sendCommand("connect", 1, [.object([AMF0Property("app", .string("live"))])])
        XCTAssertEqual(try client.nextCommand(timeout: 3).name, "_result", "one message: not yet")
        try client.sendCommand("createStream", 2, [.null])
        XCTAssertThrowsError(try client.nextCommand(timeout: 0.7)) { error in
            XCTAssertEqual(error as? FaultTestClient.Failure, .closed(.timeout))
        }
    }

    func testLatencyDelaysBothDirections() throws {
        let loopback = try start(["latency=300ms"])
        defer { loopback.stop() }
        let client = try FaultTestClient(port: loopback.port)
        defer { client.close() }
        let start = Date()
        try client.handshake()
        let elapsed = Date().timeIntervalSince(start)
        // C0C1 in (+300 ms), S0S1S2 out (+300 ms).
        XCTAssertGreaterThanOrEqual(elapsed, 0.55)
        XCTAssertLessThan(elapsed, 5)
    }

    func testThrottleBoundsTheRate() throws {
        let rate = 100_000
        let loopback = try start(["throttle=\(rate)"])
        defer { loopback.stop() }
        let client = try FaultTestClient(port: loopback.port)
        defer { client.close() }
        try client.handshake()
        try client.sendCommand("connect", 1, [.object([AMF0Property("app", .string("live"))])])
        XCTAssertEqual(try client.nextCommand(timeout: 3).name, "_result")
        // 250 kB of audio on a stream that is not publishing (the session ignores it), then a
        // command: its answer can only come after everything before it went through the throttle.
        var encoder = RTMPChunkEncoder(chunkSize: 128)
        var bytes: [UInt8] = []
        for i in 0..<250 {
            bytes += encoder.encode(RTMPMessage(type: .audio, streamID: 1, timestamp: UInt32(i * 20), chunkStreamID: 4,
                                                payload: [UInt8](repeating: 0xAF, count: 1000)))
        }
        let payload = bytes
        let start = Date()
        let sender = Thread { _ = client.send(payload) }
        sender.start()
        try client.sendCommand("createStream", 2, [.null], afterWaitingFor: sender)
        XCTAssertEqual(try client.nextCommand(timeout: 15).name, "_result")
        let elapsed = Date().timeIntervalSince(start)
        let lowerBound = Double(bytes.count) / Double(rate) - 0.2  // one tick of burst
        XCTAssertGreaterThanOrEqual(elapsed, lowerBound, "\(bytes.count) bytes at \(rate) B/s")
        XCTAssertLessThan(elapsed, lowerBound * 2 + 2, "throttled, not stalled")
    }

    func testStopClosesConnectionsAndFinishesEvents() async throws {
        let loopback = try start([])
        let events = loopback.makeEventStream()
        let client = try FaultTestClient(port: loopback.port)
        defer { client.close() }
        try client.handshake()
        loopback.stop()
        loopback.stop()
        var names: [String] = []
        for await event in events { names.append("\(event)") }  // ends because the loopback stopped
        XCTAssertTrue(names.contains("connection 1: accepted"), "\(names)")
        XCTAssertTrue(names.contains("connection 1: closed (loopback stopped)"), "\(names)")
        // EOF, or RST when the client's C2 was still unread in the loopback's socket buffer.
        let outcome = client.receive(max: 10, timeout: 3)
        XCTAssertTrue(outcome == .eof || outcome == .reset, "\(outcome)")
    }
}

/// Waits (bounded) for the first event a closure picks out.
enum FaultEventWaiter {
    struct Timeout: Error {}

    static func first<T: Sendable>(_ events: AsyncStream<LoopbackEvent>, timeout: Duration = .seconds(10),
                                   _ pick: @escaping @Sendable (LoopbackEvent) -> T?) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                for await event in events { if let value = pick(event) { return value } }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            let first = try await group.next()!
            group.cancelAll()
            guard let first else { throw Timeout() }
            return first
        }
    }
}

/// A blocking RTMP client on a raw socket, for looking at exactly what the loopback sends.
final class FaultTestClient: @unchecked Sendable {
    enum Outcome: Equatable {
        case data([UInt8])
        case eof
        case reset
        case timeout
        case error(Int32)
    }

    enum Failure: Error, Equatable {
        case connect(Int32)
        case closed(Outcome)
        case handshake(String)
    }

    let fd: Int32
    var decoder = RTMPChunkDecoder()
    private var encoder = RTMPChunkEncoder(chunkSize: 128)

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if result != 0 { let e = errno; Glibc.close(fd); throw Failure.connect(e) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        signal(SIGPIPE, SIG_IGN)
    }

    func close() { Glibc.close(fd) }

    /// Connects and reads once. A server that resets at accept can do so before connect() has
    /// returned (the kernel completed the handshake, the client thread had not run yet): connect()
    /// then fails with ECONNRESET, which is the same outcome.
    static func outcomeOfRefusedConnection(port: Int, timeout: TimeInterval = 3) throws -> Outcome {
        let client: FaultTestClient
        do {
            client = try FaultTestClient(port: port)
        } catch Failure.connect(ECONNRESET) {
            return .reset
        }
        defer { client.close() }
        return client.receive(max: 10, timeout: timeout)
    }

    static func c0c1() -> [UInt8] { [3] + [UInt8](repeating: 0, count: 8) + (0..<1528).map { UInt8($0 & 0xFF) } }

    /// Sends everything; 0 on success, else errno.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Int32 {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 { return errno }
            offset += n
        }
        return 0
    }

    func receive(max: Int, timeout: TimeInterval) -> Outcome {
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: max)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, max, 0) }
        if n > 0 { return .data(Array(buffer[0..<n])) }
        if n == 0 { return .eof }
        switch errno {
        case ECONNRESET: return .reset
        case EAGAIN, EWOULDBLOCK: return .timeout
        default: return .error(errno)
        }
    }

    func handshake() throws {
        if send(Self.c0c1()) != 0 { throw Failure.handshake("C0C1 not sent") }
        var received: [UInt8] = []
        while received.count < 3073 {
            switch receive(max: 3073 - received.count, timeout: 5) {
            case .data(let bytes): received += bytes
            case let other: throw Failure.closed(other)
            }
        }
        guard received[0] == 3 else { throw Failure.handshake("S0 is \(received[0])") }
        if send(Array(received[1...1536])) != 0 { throw Failure.handshake("C2 not sent") }
    }

    func sendCommand(_ name: String, _ transactionID: Double, _ rest: [AMF0Value], streamID: UInt32 = 0,
                     afterWaitingFor thread: Thread? = nil) throws {
        let values: [AMF0Value] = [.string(name), .number(transactionID)] + rest
        if let thread { while !thread.isFinished { usleep(1_000) } }  // the bulk send ends (bounded by SO_SNDTIMEO)
        let message = RTMPMessage.command(values, streamID: streamID, chunkStreamID: streamID == 0 ? 3 : 5)
        let errorNumber = send(encoder.encode(message))
        if errorNumber != 0 { throw Failure.closed(.error(errorNumber)) }
    }

    /// The next message `accept` selects (others are skipped), reading for at most `timeout` each time.
    func nextMessage(timeout: TimeInterval, _ accept: (RTMPMessage) -> Bool = { _ in true }) throws -> RTMPMessage {
        while true {
            while let message = try decoder.nextMessage() {
                if accept(message) { return message }
            }
            switch receive(max: 65_536, timeout: timeout) {
            case .data(let bytes): decoder.append(bytes)
            case let other: throw Failure.closed(other)
            }
        }
    }

    func nextCommand(timeout: TimeInterval) throws -> RTMPCommand {
        try RTMPCommand(message: nextMessage(timeout: timeout) { $0.type == .commandAMF0 })
    }
}

