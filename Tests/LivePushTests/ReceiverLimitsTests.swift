#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import LivePushLoopback
import LivePushWire
import XCTest

/// Each bound of ``RTMPReceiver/Limits``, reached by a raw client over a real socket: what the
/// receiver does then, and that it counts it.
final class ReceiverLimitsTests: XCTestCase {
    private func start(_ limits: RTMPReceiver.Limits) throws -> (RTMPReceiver, Int) {
        let receiver = RTMPReceiver(configuration: .init(limits: limits))
        return (receiver, try receiver.start())
    }

    private func connected(_ port: Int) throws -> RawRTMPClient {
        let client = try RawRTMPClient(port: port)
        try client.handshake()
        try client.send(.command([.string("connect"), .number(1), .object([AMF0Property("app", .string("live"))])]))
        _ = try client.readUntil { $0.type == .commandAMF0 }
        return client
    }

    /// Waits (bounded) until `limit` was counted `count` times.
    private func awaitCount(_ receiver: RTMPReceiver, _ limit: ReceiverLimit, _ count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while receiver.limitCounters()[limit] < count && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTAssertEqual(receiver.limitCounters()[limit], count, "\(limit)")
    }

    func testAtTheCapANewConnectionReplacesTheOldestStillInItsHandshakeElseIsRefused() async throws {
        let (receiver, port) = try start(.init(maxConnections: 3))
        defer { receiver.stop() }
        let idle = try (0..<3).map { _ in try RawRTMPClient(port: port) }
        try await Task.sleep(for: .milliseconds(100))  // not a measurement: lets the accepts land in order
        // A publisher gets in: the oldest idle socket makes room.
        let first = try connected(port)
        try await awaitCount(receiver, .connectionEvicted, 1)
        XCTAssertTrue(try idle[0].readUntilClosed())
        let second = try connected(port)
        let third = try connected(port)
        try await awaitCount(receiver, .connectionEvicted, 3)
        // Three connections past their handshake: the next one is refused.
        let refused = try RawRTMPClient(port: port)
        XCTAssertTrue(try refused.readUntilClosed())
        try await awaitCount(receiver, .connectionRefused, 1)
        _ = (first, second, third)
    }

    func testHandshakeAndIdleTimeoutsCloseTheConnection() async throws {
        let (receiver, port) = try start(.init(handshakeTimeout: .milliseconds(300), idleTimeout: .milliseconds(600)))
        defer { receiver.stop() }
        let silent = try RawRTMPClient(port: port)
        XCTAssertTrue(try silent.readUntilClosed())
        try await awaitCount(receiver, .handshakeTimeout, 1)
        let quiet = try connected(port)
        XCTAssertTrue(try quiet.readUntilClosed())
        try await awaitCount(receiver, .idleTimeout, 1)
        XCTAssertEqual(receiver.limitCounters()[.handshakeTimeout], 1, "a connection that shook hands is not timed out for it")
    }

    func testPublishesAndStreamsPerConnectionAreCapped() async throws {
        let (receiver, port) = try start(.init(maxPublishesPerConnection: 2, maxStreamsPerConnection: 2))
        defer { receiver.stop() }
        let client = try connected(port)
        var codes: [String] = []
        for name in ["a", "b", "c"] {
            try client.send(.command([.string("publish"), .number(0), .null, .string(name), .string("live")], streamID: 1, chunkStreamID: 4))
            let status = try AMF0.decode(client.readUntil { $0.type == .commandAMF0 }.payload)
            codes.append(status[3]["description"]?.stringValue ?? "?")
        }
        XCTAssertEqual(codes, ["Start publishing", "Start publishing", "Too many publishes on this connection."])
        var results: [String] = []
        for transaction in 2...4 {
            try client.send(.command([.string("createStream"), .number(Double(transaction)), .null]))
            results.append(try AMF0.decode(client.readUntil { $0.type == .commandAMF0 }.payload)[0].stringValue ?? "?")
        }
        XCTAssertEqual(results, ["_result", "_result", "_error"])
        XCTAssertEqual(receiver.limitCounters()[.publishesPerConnection], 1)
        XCTAssertEqual(receiver.limitCounters()[.streamsPerConnection], 1)
    }

    func testUnfinishedMessagesAcrossChunkStreamsAreCapped() async throws {
        let (receiver, port) = try start(.init(maxChunkStreamBytes: 64 * 1024, maxChunkStreams: 8))
        defer { receiver.stop() }
        // Four messages of 1 MiB announced on four chunk streams, 160 whole chunks (20 KiB) of each
        // sent: 80 KiB held.
        let client = try connected(port)
        var encoder = RTMPChunkEncoder(chunkSize: 128)
        for csid in UInt32(10)..<14 {
            let message = RTMPMessage(type: .video, streamID: 1, chunkStreamID: csid, payload: [UInt8](repeating: 0, count: 1 << 20))
            try? client.sendAll(Array(encoder.encode(message).prefix(12 + 128 + 159 * 129)))
        }
        XCTAssertTrue(try client.readUntilClosed())
        try await awaitCount(receiver, .chunkStreamBuffers, 1)
    }

    func testStreamIDsFromTheWireAreRangeChecked() {
        XCTAssertNil(RTMPSessionHandler.streamID(.nan))
        XCTAssertNil(RTMPSessionHandler.streamID(-1))
        XCTAssertNil(RTMPSessionHandler.streamID(1e300))
        XCTAssertNil(RTMPSessionHandler.streamID(1.5))
        XCTAssertEqual(RTMPSessionHandler.streamID(4_294_967_295), UInt32.max)
        XCTAssertEqual(RTMPSessionHandler.streamID(1), 1)
    }

    func testStreamNamesBecomeSafeFileNames() {
        XCTAssertEqual(RTMPSessionHandler.fileName("victim.flv\u{0}"), "victim.flv_")
        XCTAssertEqual(RTMPSessionHandler.fileName(".."), "_..")
        XCTAssertEqual(RTMPSessionHandler.fileName("../../etc/passwd"), "_.._.._etc_passwd")
        XCTAssertEqual(RTMPSessionHandler.fileName("a\u{202E}b\u{1B}[31m"), "a_b_[31m")
        XCTAssertEqual(RTMPSessionHandler.fileName(""), "_")
        let long = RTMPSessionHandler.fileName(String(repeating: "é", count: 600))
        XCTAssertLessThanOrEqual(long.utf8.count, 160)
        XCTAssertNotEqual(long, RTMPSessionHandler.fileName(String(repeating: "é", count: 601)))
    }
}
